#include "wire/relay_protocol.h"

#include <boost/json/serialize.hpp>

#include "net/base64.h"
#include "net/proxy_headers.h"
#include "wire/json_fields.h"

namespace suanli::wire {
namespace {

namespace json = boost::json;
using core::Result;

json::array HeadersJson(const net::Headers& headers) {
  json::array out;
  for (const auto& [name, value] : headers) {
    out.emplace_back(json::array{json::string(name), json::string(value)});
  }
  return out;
}

// [[name, value], ...]: names HTTP tokens, values that cannot smuggle another header in.
void ReadHeaders(JsonFields& fields, net::Headers* out) {
  const json::value* raw = fields.Raw("headers");
  if (raw == nullptr) return;
  if (!raw->is_array() || raw->as_array().size() > kMaxRelayHeaders) {
    return fields.Fail("headers: must be an array of at most " + std::to_string(kMaxRelayHeaders) +
                       " [name, value] pairs");
  }
  for (const json::value& pair : raw->as_array()) {
    const json::array* items = pair.if_array();
    if (items == nullptr || items->size() != 2 || !(*items)[0].is_string() ||
        !(*items)[1].is_string() || !net::IsHeaderName((*items)[0].as_string()) ||
        !net::IsHeaderValue((*items)[1].as_string())) {
      return fields.Fail(
          "headers: each must be [name, value]: a token for a name, a value without line breaks");
    }
    out->emplace_back((*items)[0].as_string(), (*items)[1].as_string());
  }
}

void ReadBody(JsonFields& fields, std::string* out) {
  std::string base64;
  fields.String("body_base64", &base64, {.max_length = kMaxRelayBodyBase64});
  if (!fields.ok()) return;
  Result<std::string> body = net::Base64Decode(base64);
  if (!body.ok()) return fields.Fail("body_base64: " + body.status().message());
  *out = std::move(*body);
}

}  // namespace

std::string EncodeRelayRequests(const std::vector<RelayRequest>& requests) {
  json::array list;
  for (const RelayRequest& request : requests) {
    json::object item{{"id", request.id}, {"pod_id", request.pod_id}};
    if (request.kind == RelayRequest::Kind::kLogs) {
      item["kind"] = "logs";
      if (request.tail >= 0) item["tail"] = request.tail;
      if (!request.since.empty()) item["since"] = request.since;
      item["timestamps"] = request.timestamps;
    } else if (request.kind == RelayRequest::Kind::kVolumeArchive) {
      item["kind"] = "volume_archive";
      item["volume"] = request.volume;
      item["move_id"] = request.move_id;
      item["offset"] = request.offset;
      item["length"] = request.length;
    } else if (request.kind == RelayRequest::Kind::kRemoveVolume) {
      item["kind"] = "remove_volume";
      item["volume"] = request.volume;
    } else if (request.kind == RelayRequest::Kind::kSnapshotVolume) {
      item["kind"] = "snapshot_volume";
      item["volume"] = request.volume;
      item["snapshot"] = request.snapshot;
    } else if (request.kind == RelayRequest::Kind::kRestoreSnapshot) {
      item["kind"] = "restore_snapshot";
      item["volume"] = request.volume;
      item["snapshot"] = request.snapshot;
      item["sha256"] = request.sha256;
    } else if (request.kind == RelayRequest::Kind::kRemoveSnapshot) {
      item["kind"] = "remove_snapshot";
      item["snapshot"] = request.snapshot;
    } else {
      item["kind"] = "http";
      item["port"] = request.port;
      item["method"] = request.method;
      item["target"] = request.target;
      item["headers"] = HeadersJson(request.headers);
      item["body_base64"] = net::Base64Encode(request.body);
      if (request.timeout_ms > 0) item["timeout_ms"] = request.timeout_ms;
    }
    list.emplace_back(std::move(item));
  }
  return json::serialize(json::object{{"requests", std::move(list)}});
}

namespace {

// One relayed request of a batch; `item` names its errors.
RelayRequest ReadRelayRequest(JsonFields& item) {
  RelayRequest request;
  std::string kind;
  item.String("id", &request.id, {.required = true, .max_length = 64});
  item.String("pod_id", &request.pod_id, {.required = true, .max_length = 64});
  item.String("kind", &kind, {.required = true, .max_length = 16});
  if (kind == "logs") {
    request.kind = RelayRequest::Kind::kLogs;
    item.Int("tail", &request.tail, {0, 1'000'000});
    item.String("since", &request.since, {.max_length = 64});
    item.Bool("timestamps", &request.timestamps);
  } else if (kind == "http") {
    request.kind = RelayRequest::Kind::kHttp;
    item.Int("port", &request.port, {1, 65535, true});
    item.String("method", &request.method, {.required = true, .max_length = 16});
    item.String("target", &request.target, {.required = true, .max_length = 8192});
    ReadHeaders(item, &request.headers);
    ReadBody(item, &request.body);
    item.Int("timeout_ms", &request.timeout_ms, {0, INT32_MAX});
  } else if (kind == "volume_archive") {
    request.kind = RelayRequest::Kind::kVolumeArchive;
    item.String("volume", &request.volume, {.required = true, .max_length = 128});
    item.String("move_id", &request.move_id, {.required = true, .max_length = 64});
    item.Int64("offset", &request.offset, {0, INT64_MAX, true});
    item.Int64("length", &request.length, {1, kMaxVolumeChunkBytes, true});
  } else if (kind == "remove_volume") {
    request.kind = RelayRequest::Kind::kRemoveVolume;
    item.String("volume", &request.volume, {.required = true, .max_length = 128});
  } else if (kind == "snapshot_volume" || kind == "restore_snapshot") {
    request.kind = kind == "snapshot_volume" ? RelayRequest::Kind::kSnapshotVolume
                                             : RelayRequest::Kind::kRestoreSnapshot;
    item.String("volume", &request.volume, {.required = true, .max_length = 128});
    item.String("snapshot", &request.snapshot, {.required = true, .max_length = 64});
    if (request.kind == RelayRequest::Kind::kRestoreSnapshot) {
      item.String("sha256", &request.sha256, {.required = true, .max_length = 64});
    }
  } else if (kind == "remove_snapshot") {
    request.kind = RelayRequest::Kind::kRemoveSnapshot;
    item.String("snapshot", &request.snapshot, {.required = true, .max_length = 64});
  } else if (item.ok()) {
    item.Fail(
        "kind: must be logs, http, volume_archive, remove_volume, snapshot_volume, "
        "restore_snapshot or remove_snapshot, got '" +
        kind + "'");
  }
  return request;
}

}  // namespace

Result<RelayBatch> DecodeRelayRequests(std::string_view text) {
  Result<json::object> body = ParseJsonObject(text, "the server's relayed requests");
  if (!body.ok()) return body.status();
  const json::value* list = body->if_contains("requests");
  if (list == nullptr || !list->is_array() || list->as_array().size() > kMaxRelayRequestsPerPoll) {
    return core::InvalidArgumentError("requests: must be an array of at most " +
                                      std::to_string(kMaxRelayRequestsPerPoll) + " objects");
  }
  // Each request on its own: one the agent cannot read is answered with why, and the rest of the
  // batch is served, rather than every user's request waiting out its timeout.
  RelayBatch batch;
  for (const json::value& value : list->as_array()) {
    const json::object* object = value.if_object();
    if (object == nullptr) {
      batch.unreadable.emplace_back("", "a relayed request must be an object");
      continue;
    }
    JsonFields item(*object, UnknownFields::kIgnore);
    RelayRequest request = ReadRelayRequest(item);
    if (core::Status status = item.Finish(); !status.ok()) {
      const json::value* id = object->if_contains("id");
      batch.unreadable.emplace_back(
          id != nullptr && id->is_string() ? std::string(id->as_string()) : std::string(),
          status.message());
      continue;
    }
    batch.requests.push_back(std::move(request));
  }
  return batch;
}

std::string EncodeRelayAnswer(const RelayAnswer& answer) {
  return json::serialize(json::object{{"status", answer.status},
                                      {"headers", HeadersJson(answer.headers)},
                                      {"body_base64", net::Base64Encode(answer.body)}});
}

Result<RelayAnswer> DecodeRelayAnswer(std::string_view text) {
  Result<json::object> body = ParseJsonObject(text);
  if (!body.ok()) return body.status();
  JsonFields fields(*body);
  RelayAnswer answer;
  fields.Int("status", &answer.status, {200, 599, true});
  ReadHeaders(fields, &answer.headers);
  ReadBody(fields, &answer.body);
  if (core::Status status = fields.Finish(); !status.ok()) return status;
  return answer;
}

}  // namespace suanli::wire
