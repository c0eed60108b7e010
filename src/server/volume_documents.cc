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
  switch (state) {
    case core::VolumeState::kMoving:
      return "moving";
    case core::VolumeState::kRestoring:
      return "restoring";
    case core::VolumeState::kAvailable:
      break;
  }
  return "available";
}

core::VolumeState VolumeStateNamed(std::string_view name) {
  if (name == "moving") return core::VolumeState::kMoving;
  if (name == "restoring") return core::VolumeState::kRestoring;
  return core::VolumeState::kAvailable;
}

std::string_view SnapshotStateName(core::SnapshotState state) {
  switch (state) {
    case core::SnapshotState::kReady:
      return "ready";
    case core::SnapshotState::kFailed:
      return "failed";
    case core::SnapshotState::kCreating:
      break;
  }
  return "creating";
}

core::SnapshotState SnapshotStateNamed(std::string_view name) {
  if (name == "ready") return core::SnapshotState::kReady;
  if (name == "failed") return core::SnapshotState::kFailed;
  return core::SnapshotState::kCreating;
}

}  // namespace

json::object ToDocument(const core::Volume& volume) {
  return {{"id", volume.id},
          {"owner_id", volume.owner_id},
          {"project_id", volume.project_id},
          {"name", volume.name},
          {"size_gb", volume.size_gb},
          {"home_node_id", volume.home_node_id},
          {"state", VolumeStateName(volume.state)},
          {"moving_to_node_id", volume.moving_to_node_id},
          {"restored_from", volume.restored_from},
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
  fields.String("project_id", &volume.project_id, kText);  // absent before projects' volumes
  fields.String("name", &volume.name, kText);
  fields.Int("size_gb", &volume.size_gb, {0, INT32_MAX});
  fields.String("home_node_id", &volume.home_node_id, kText);
  fields.String("state", &state, kText);
  volume.state = VolumeStateNamed(state);
  fields.String("moving_to_node_id", &volume.moving_to_node_id, kText);
  fields.String("restored_from", &volume.restored_from, kText);
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

json::object ToDocument(const core::Snapshot& snapshot) {
  return {{"id", snapshot.id},
          {"owner_id", snapshot.owner_id},
          {"project_id", snapshot.project_id},
          {"name", snapshot.name},
          {"volume_id", snapshot.volume_id},
          {"volume_name", snapshot.volume_name},
          {"volume_size_gb", snapshot.volume_size_gb},
          {"node_id", snapshot.node_id},
          {"state", SnapshotStateName(snapshot.state)},
          {"state_reason", snapshot.state_reason},
          {"size_bytes", snapshot.size_bytes},
          {"sha256", snapshot.sha256},
          {"storage_price_per_gb_month_micros", snapshot.storage_price_per_gb_month.micros()},
          {"created_at", FormatTime(snapshot.created_at)},
          {"storage_billed_to", FormatTime(snapshot.storage_billed_to)},
          {"cost_micros", snapshot.cost.micros()}};
}

core::Result<core::Snapshot> SnapshotFromDocument(const json::object& document) {
  JsonFields fields(document, wire::UnknownFields::kIgnore);
  core::Snapshot snapshot;
  std::string state;
  fields.String("id", &snapshot.id, kText);
  fields.String("owner_id", &snapshot.owner_id, kText);
  fields.String("project_id", &snapshot.project_id, kText);  // absent before projects' volumes
  fields.String("name", &snapshot.name, kText);
  fields.String("volume_id", &snapshot.volume_id, kText);
  fields.String("volume_name", &snapshot.volume_name, kText);
  fields.Int("volume_size_gb", &snapshot.volume_size_gb, {0, INT32_MAX});
  fields.String("node_id", &snapshot.node_id, kText);
  fields.String("state", &state, kText);
  snapshot.state = SnapshotStateNamed(state);
  fields.String("state_reason", &snapshot.state_reason, kText);
  fields.Int64("size_bytes", &snapshot.size_bytes, {0, INT64_MAX});
  fields.String("sha256", &snapshot.sha256, kText);
  fields.Micros("storage_price_per_gb_month_micros", &snapshot.storage_price_per_gb_month,
                kAnyMicros);
  fields.Time("created_at", &snapshot.created_at);
  fields.Time("storage_billed_to", &snapshot.storage_billed_to);
  fields.Micros("cost_micros", &snapshot.cost, kAnyMicros);
  if (core::Status status = fields.Finish(); !status.ok()) {
    return core::InternalError("the stored snapshot " + snapshot.id +
                               " is corrupt: " + status.message());
  }
  return snapshot;
}

std::string DocumentText(const core::Snapshot& snapshot) {
  return json::serialize(ToDocument(snapshot));
}

json::array VolumeMountsDocument(const std::vector<core::VolumeMount>& mounts) {
  json::array out;
  for (const core::VolumeMount& mount : mounts) {
    json::object document{{"volume_id", mount.volume_id},
                          {"mount_path", mount.mount_path},
                          {"read_only", mount.read_only}};
    if (mount.shared) document["shared"] = true;
    out.push_back(std::move(document));
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
    read.Bool("shared", &mount.shared);  // absent before the shared backend, and when false
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
