// Routes for volumes of their own (create, list, read, grow, delete), and the agent's side of a
// volume's move: the range of the archive its new node fetches, relayed to the node that holds it
// (docs/architecture.md, "Moving a volume").
#include "server/routes/volumes.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/proxy_headers.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/json_fields.h"
#include "wire/relay_protocol.h"
#include "wire/views.h"

namespace suanli::server {

void SendVolumeRemovals(ControlPlane& plane, Relay& relay) {
  for (auto& [node_id, volume] : plane.TakeVolumeRemovals()) {
    RelayRequest request;
    request.kind = RelayRequest::Kind::kRemoveVolume;
    request.pod_id = volume;  // for the agent's log: what the request is about
    request.volume = volume;
    // Best effort: a node that is away, or a full queue, keeps its copy (docs/agent.md).
    (void)relay.Submit(node_id, node_id, std::move(request), [](const net::HttpResponse&) {});
  }
}

namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

ControlPlane::StorageWorkAnswer StorageAnswerOf(const net::HttpResponse& answer) {
  ControlPlane::StorageWorkAnswer out;
  out.status = answer.status;
  for (const auto& [key, value] : answer.headers) {
    const std::string name = net::LowerAscii(key);
    if (name == net::LowerAscii(wire::kArchiveSizeHeader)) {
      out.size_bytes = ParseInteger(value, 0, INT64_MAX).value_or(-1);
    } else if (name == net::LowerAscii(wire::kArchiveSha256Header)) {
      out.sha256 = value;
    }
  }
  if (answer.status / 100 != 2) {
    // The agent's error is {"error":{"code":...,"message":...}}; its message is what people need.
    boost::system::error_code error;
    const json::value body = json::parse(answer.body, error);
    const json::value* message = error ? nullptr : body.find_pointer("/error/message", error);
    out.error = message != nullptr && message->is_string() ? std::string(message->as_string())
                                                           : answer.body.substr(0, 300);
  }
  return out;
}

}  // namespace

void SendStorageWork(ControlPlane& plane, Relay& relay, const std::string& node_id) {
  for (RelayRequest& work : plane.TakeStorageWork(node_id)) {
    RelayRequest sent = work;
    // The agent answers at once (202 while the work runs in its background); a request lost
    // with a killed agent ends in the relay's 504, and the work goes out again.
    const Status submitted = relay.Submit(node_id, node_id, std::move(sent),
                                          [&plane, work](const net::HttpResponse& answer) {
                                            plane.NoteStorageWork(work, StorageAnswerOf(answer));
                                          });
    // A full queue: the work goes out again at the agent's next poll.
    if (!submitted.ok()) {
      ControlPlane::StorageWorkAnswer busy;
      busy.status = 503;
      plane.NoteStorageWork(work, busy);
    }
  }
}

namespace {

json::object VolumeInfoView(const VolumeInfo& info) {
  return wire::VolumeView(info.volume, info.use);
}

void ListVolumes(Call& call) {
  call.Respond(call.plane().ListVolumes(call.principal), [](const std::vector<VolumeInfo>& all) {
    return ListOf("volumes", all, VolumeInfoView);
  });
}

void CreateVolume(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  VolumeSpec spec;
  fields.String("name", &spec.name, {.required = true, .max_length = 64});
  fields.String("from_snapshot", &spec.from_snapshot, {.max_length = 64});
  fields.Bool("shared", &spec.shared);
  fields.String("project", &spec.project, {.max_length = 64});
  // From a snapshot, the size defaults to its volume's.
  fields.Int("size_gb", &spec.size_gb, {1, 100'000, fields.Raw("from_snapshot") == nullptr});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  Result<Written<VolumeInfo>> created = call.plane().CreateVolume(call.principal, std::move(spec));
  if (created.ok() && created->value.volume.state == core::VolumeState::kRestoring) {
    SendStorageWork(call.plane(), call.relay(), created->value.volume.home_node_id);
  }
  call.Respond(std::move(created), VolumeInfoView, 201);
}

void GetVolume(Call& call) {
  call.Respond(call.plane().GetVolume(call.principal, call.param(0)), VolumeInfoView);
}

void ResizeVolume(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  int size_gb = 0;
  fields.Int("size_gb", &size_gb, {1, 100'000, true});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().ResizeVolume(call.principal, call.param(0), size_gb), VolumeInfoView);
}

void DeleteVolume(Call& call) {
  Result<Written<VolumeInfo>> deleted = call.plane().DeleteVolume(call.principal, call.param(0));
  if (deleted.ok()) SendVolumeRemovals(call.plane(), call.relay());
  call.Respond(std::move(deleted), VolumeInfoView);
}

void CreateSnapshot(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body.empty() ? "{}" : call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  SnapshotSpec spec;
  spec.volume = call.param(0);
  fields.String("name", &spec.name, {.max_length = 64});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  Result<Written<core::Snapshot>> created =
      call.plane().CreateSnapshot(call.principal, std::move(spec));
  if (created.ok()) SendStorageWork(call.plane(), call.relay(), created->value.node_id);
  call.Respond(std::move(created), wire::SnapshotView, 201);
}

void ListSnapshots(Call& call) {
  call.Respond(call.plane().ListSnapshots(call.principal),
               [](const std::vector<core::Snapshot>& all) {
                 return ListOf("snapshots", all, wire::SnapshotView);
               });
}

void GetSnapshot(Call& call) {
  call.Respond(call.plane().GetSnapshot(call.principal, call.param(0)), wire::SnapshotView);
}

void DeleteSnapshot(Call& call) {
  Result<Written<core::Snapshot>> deleted =
      call.plane().DeleteSnapshot(call.principal, call.param(0));
  if (deleted.ok()) SendStorageWork(call.plane(), call.relay(), deleted->value.node_id);
  call.Respond(std::move(deleted), wire::SnapshotView);
}

// The new node's agent asks for the bytes of a move's archive from `offset`; the node holding the
// volume answers through its relay (it makes the archive on the first ask, and the same one for
// every later ask of the move, so a fetch resumes where it stopped).
void MoveArchive(Call& call) {
  std::optional<int64_t> offset = 0;
  std::optional<int64_t> length = wire::kMaxVolumeChunkBytes;
  if (const std::optional<std::string> text = call.request.QueryValue("offset")) {
    offset = ParseInteger(*text, 0, INT64_MAX);
  }
  if (const std::optional<std::string> text = call.request.QueryValue("length")) {
    length = ParseInteger(*text, 1, wire::kMaxVolumeChunkBytes);
  }
  if (!offset || !length) {
    return call.Respond(
        core::InvalidArgumentError("offset must be a byte offset (0 or more) and length 1 to " +
                                   std::to_string(wire::kMaxVolumeChunkBytes)));
  }
  Result<ControlPlane::MoveSource> source =
      call.plane().MoveSourceFor(call.principal, call.param(0));
  if (!source.ok()) return call.Respond(source.status());
  if (!source->reachable) {
    return call.Respond(core::UnavailableError(
        "node " + source->node_name + ", which holds volume " + source->volume +
        ", is unreachable; the move goes on once it is back"));
  }
  RelayRequest request;
  request.kind = RelayRequest::Kind::kVolumeArchive;
  request.pod_id = source->volume;
  request.volume = source->volume;
  request.move_id = call.param(0);
  request.offset = *offset;
  request.length = *length;
  auto shared = std::make_shared<Call>(std::move(call));
  const Status submitted = shared->relay().Submit(
      source->node_id, source->node_name, std::move(request),
      [shared](net::HttpResponse answer) { shared->Respond(std::move(answer)); });
  if (!submitted.ok()) shared->Respond(submitted);
}

// clang-format off
constexpr Route kVolumeRoutes[] = {
  {{"GET", "/v1/volumes", RouteAccess::kUser, "Your volumes"}, ListVolumes},
  {{"POST", "/v1/volumes", RouteAccess::kUser, "Create a volume (name, size_gb)"}, CreateVolume},
  {{"GET", "/v1/volumes/{id}", RouteAccess::kUser, "A volume (by id or name), with the pods that use it"}, GetVolume},
  {{"PATCH", "/v1/volumes/{id}", RouteAccess::kUser, "Grow a volume (size_gb)"}, ResizeVolume},
  {{"DELETE", "/v1/volumes/{id}", RouteAccess::kUser, "Delete a volume no pod uses"}, DeleteVolume},
  {{"POST", "/v1/volumes/{id}/snapshots", RouteAccess::kUser, "Snapshot a volume (name optional): a point-in-time copy, made on its node"}, CreateSnapshot},
  {{"GET", "/v1/snapshots", RouteAccess::kUser, "Your snapshots"}, ListSnapshots},
  {{"GET", "/v1/snapshots/{id}", RouteAccess::kUser, "A snapshot (by id or name)"}, GetSnapshot},
  {{"DELETE", "/v1/snapshots/{id}", RouteAccess::kUser, "Delete a snapshot no restore is reading"}, DeleteSnapshot},
  {{"GET", "/v1/agent/moves/{id}/archive", RouteAccess::kNode, "Agent: a range of a moving volume's archive (?offset=N&length=N), relayed from the node that holds it"}, MoveArchive},
};
// clang-format on

}  // namespace

std::span<const Route> VolumeRoutes() { return kVolumeRoutes; }

}  // namespace suanli::server
