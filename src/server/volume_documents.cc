#include "server/volume_documents.h"

#include <boost/json/serialize.hpp>

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::FormatTime;
using wire::JsonFields;

constexpr wire::TextRule kText{.max_length = size_t{1} << 20};
constexpr wire::MicrosRule kAnyMicros{.allow_negative = true};
constexpr size_t kMaxStoredItems = 1 << 16;

std::string_view VolumeStateName(core::VolumeState state) {
  return state == core::VolumeState::kMoving ? "moving" : "available";
}

}  // namespace

json::object ToDocument(const core::Volume& volume) {
  return {{"id", volume.id},
          {"owner_id", volume.owner_id},
          {"name", volume.name},
          {"size_gb", volume.size_gb},
          {"home_node_id", volume.home_node_id},
          {"state", VolumeStateName(volume.state)},
          {"moving_to_node_id", volume.moving_to_node_id},
          {"storage_price_per_gb_month_micros", volume.storage_price_per_gb_month.micros()},
          {"created_at", FormatTime(volume.created_at)},
          {"storage_billed_to", FormatTime(volume.storage_billed_to)},
          {"cost_micros", volume.cost.micros()}};
}

core::Result<core::Volume> VolumeFromDocument(const json::object& document) {
  JsonFields fields(document, wire::UnknownFields::kIgnore);
  core::Volume volume;
  std::string state;
  fields.String("id", &volume.id, kText);
  fields.String("owner_id", &volume.owner_id, kText);
  fields.String("name", &volume.name, kText);
  fields.Int("size_gb", &volume.size_gb, {0, INT32_MAX});
  fields.String("home_node_id", &volume.home_node_id, kText);
  fields.String("state", &state, kText);
  volume.state = state == "moving" ? core::VolumeState::kMoving : core::VolumeState::kAvailable;
  fields.String("moving_to_node_id", &volume.moving_to_node_id, kText);
  fields.Micros("storage_price_per_gb_month_micros", &volume.storage_price_per_gb_month,
                kAnyMicros);
  fields.Time("created_at", &volume.created_at);
  fields.Time("storage_billed_to", &volume.storage_billed_to);
  fields.Micros("cost_micros", &volume.cost, kAnyMicros);
  if (core::Status status = fields.Finish(); !status.ok()) {
    return core::InternalError("the stored volume " + volume.id +
                               " is corrupt: " + status.message());
  }
  return volume;
}

std::string DocumentText(const core::Volume& volume) { return json::serialize(ToDocument(volume)); }

json::array VolumeMountsDocument(const std::vector<core::VolumeMount>& mounts) {
  json::array out;
  for (const core::VolumeMount& mount : mounts) {
    out.push_back(json::object{{"volume_id", mount.volume_id},
                               {"mount_path", mount.mount_path},
                               {"read_only", mount.read_only}});
  }
  return out;
}

json::array VolumeMovesDocument(const std::vector<core::VolumeMove>& moves) {
  json::array out;
  for (const core::VolumeMove& move : moves) {
    out.push_back(json::object{{"id", move.id},
                               {"volume", move.volume},
                               {"from_node_id", move.from_node_id},
                               {"started_at", FormatTime(move.started_at)}});
  }
  return out;
}

void ReadVolumeMounts(JsonFields& fields, std::vector<core::VolumeMount>* out) {
  fields.Objects("volumes", kMaxStoredItems, [out](JsonFields& read) {
    core::VolumeMount mount;
    read.String("volume_id", &mount.volume_id, kText);
    read.String("mount_path", &mount.mount_path, kText);
    read.Bool("read_only", &mount.read_only);
    out->push_back(std::move(mount));
  });
}

void ReadVolumeMoves(JsonFields& fields, std::vector<core::VolumeMove>* out) {
  fields.Objects("moves", kMaxStoredItems, [out](JsonFields& read) {
    core::VolumeMove move;
    read.String("id", &move.id, kText);
    read.String("volume", &move.volume, kText);
    read.String("from_node_id", &move.from_node_id, kText);
    read.Time("started_at", &move.started_at);
    out->push_back(std::move(move));
  });
}

}  // namespace suanli::server
