#include "agent/relay.h"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <list>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "agent/reconcile.h"
#include "agent/volume_move.h"
#include "net/http.h"
#include "net/http_client.h"
#include "net/proxy_headers.h"
#include "wire/relay_protocol.h"

namespace suanli::agent {
namespace {

using wire::RelayAnswer;
using wire::RelayRequest;

RelayAnswer ErrorReply(int status, std::string_view code, std::string_view message) {
  net::HttpResponse error = net::ErrorResponse(status, code, message);
  return {status, {{"Content-Type", error.content_type}}, std::move(error.body)};
}

std::string FormatNanos(core::TimePoint time) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  const time_t seconds = static_cast<time_t>(nanos / 1'000'000'000 - (nanos % 1'000'000'000 < 0));
  const int64_t fraction = ((nanos % 1'000'000'000) + 1'000'000'000) % 1'000'000'000;
  tm utc{};
  gmtime_r(&seconds, &utc);
  char text[96];  // ample for any int fields: the compiler checks the worst case
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(fraction));
  return text;
}

RelayAnswer DoLogs(Engine& engine, const RelayRequest& work) {
  LogOptions options;
  options.tail = work.tail;
  options.timestamps = work.timestamps;
  if (!work.since.empty()) {
    options.since = ParseEngineTime(work.since);
    if (!options.since) {
      return ErrorReply(400, "INVALID_ARGUMENT", "since: '" + work.since + "' is no RFC 3339 time");
    }
  }
  core::Result<std::string> logs = engine.Logs(ContainerName(work.pod_id), options);
  if (!logs.ok()) {
    if (logs.status().code() == core::StatusCode::kNotFound) {
      return ErrorReply(
          404, "NOT_FOUND",
          "pod " + work.pod_id + " has no container on its node yet (it is starting, or stopping)");
    }
    return ErrorReply(
        502, "UNAVAILABLE",
        "the node's container engine could not give the logs: " + logs.status().message());
  }
  RelayAnswer reply;
  reply.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  std::string text = work.timestamps ? NormalizeLogTimestamps(*logs) : std::move(*logs);
  if (text.size() > kMaxRelayedLogBytes) {
    // The newest lines are what a person asks for; start at a whole line.
    size_t cut = text.size() - kMaxRelayedLogBytes;
    const size_t line = text.find('\n', cut);
    cut = line == std::string::npos ? cut : line + 1;
    text.erase(0, cut);
    reply.headers.emplace_back("X-Suanli-Logs-Truncated", "true");
  }
  reply.body = std::move(text);
  return reply;
}

// What the server accepts from us; a pod's odd header is dropped rather than losing its answer.
bool Relayable(const std::string& name, const std::string& value) {
  return net::IsHeaderName(name) && net::IsHeaderValue(value);
}

RelayAnswer DoHttp(Engine& engine, const RelayOptions& options, const RelayRequest& work) {
  const std::string port = std::to_string(work.port);
  core::Result<ContainerInfo> container = engine.Inspect(ContainerName(work.pod_id));
  if (!container.ok()) {
    if (container.status().code() == core::StatusCode::kNotFound) {
      return ErrorReply(502, "UNAVAILABLE", "pod " + work.pod_id + " has no container on its node");
    }
    return ErrorReply(502, "UNAVAILABLE",
                      "the node's container engine: " + container.status().message());
  }
  int host_port = 0;
  for (const PublishedPort& published : container->ports) {
    if (published.container_port == work.port && published.protocol == "tcp") {
      host_port = published.host_port;
    }
  }
  if (host_port == 0) {
    return ErrorReply(502, "UNAVAILABLE",
                      "port " + port + " of pod " + work.pod_id + " is not published on its node");
  }
  const std::chrono::milliseconds timeout =
      work.timeout_ms > 0 ? std::chrono::milliseconds(work.timeout_ms) : options.pod_timeout;
  core::Result<std::unique_ptr<net::HttpClient>> client = net::HttpClient::Create(
      "http://" + options.pod_address + ":" + std::to_string(host_port), {timeout});
  if (!client.ok()) return ErrorReply(502, "UNAVAILABLE", client.status().message());
  std::string body;
  bool too_large = false;
  core::Result<net::HttpResponse> answer = (*client)->Stream(
      work.method, work.target, work.body, work.headers, [&](std::string_view piece) {
        if (body.size() + piece.size() > kMaxRelayedBodyBytes) {
          too_large = true;
          return false;
        }
        body.append(piece);
        return true;
      });
  if (too_large) {
    return ErrorReply(502, "PAYLOAD_TOO_LARGE",
                      "pod " + work.pod_id + " answered on port " + port +
                          " with a body larger than the relay carries (" +
                          std::to_string(kMaxRelayedBodyBytes / 1024) + " KiB)");
  }
  if (!answer.ok()) {
    if (answer.status().message().find("did not answer") != std::string::npos) {
      return ErrorReply(504, "DEADLINE_EXCEEDED",
                        "pod " + work.pod_id + " did not answer on port " + port + " within " +
                            std::to_string(timeout.count() / 1000) + " s");
    }
    return ErrorReply(502, "UNAVAILABLE",
                      "nothing answers on port " + port + " in pod " + work.pod_id + " yet (" +
                          answer.status().message() + ")");
  }
  if (answer->status < 200 || answer->status > 599) {
    return ErrorReply(502, "UNAVAILABLE",
                      "pod " + work.pod_id + " answered with HTTP status " +
                          std::to_string(answer->status) +
                          ", which the relay does not carry (no protocol upgrades such as "
                          "WebSockets)");
  }
  RelayAnswer reply;
  reply.status = answer->status;
  // Hop-by-hop fields go here, with those the pod's Connection header names: the server cannot
  // drop what it is not told was named.
  for (auto& [name, value] : net::EndToEndHeaders(answer->headers, {"content-length"})) {
    if (Relayable(name, value)) reply.headers.emplace_back(std::move(name), std::move(value));
  }
  reply.body = std::move(body);
  return reply;
}

// Sends `reply` to the server as the answer of request `id` (for pod `pod_id`, "" when unknown).
void PostAnswer(const RelayOptions& options, const net::Headers& auth, const std::string& id,
                const std::string& pod_id, const RelayAnswer& reply,
                const std::function<void(const std::string&)>& log) {
  core::Result<std::unique_ptr<net::HttpClient>> client =
      net::HttpClient::Create(options.server_url, {std::chrono::seconds(10)});
  if (!client.ok()) return;
  core::Result<net::HttpResponse> posted = (*client)->Send(
      "POST", "/v1/agent/requests/" + net::PercentEncode(id), wire::EncodeRelayAnswer(reply), auth);
  // 404: the user's request ended meanwhile (it waited too long); nothing to do.
  if (!posted.ok() || (posted->status != 204 && posted->status != 404)) {
    log("relay: could not answer request " + id + (pod_id.empty() ? "" : " for pod " + pod_id) +
        ": " +
        (posted.ok() ? "HTTP " + std::to_string(posted->status) + " " + posted->body.substr(0, 200)
                     : posted.status().message()));
  }
}

// Sleeps up to `duration`, in short steps so that stopping is noticed quickly.
void Nap(std::chrono::milliseconds duration, const std::function<bool()>& stopping) {
  constexpr auto kStep = std::chrono::milliseconds(100);
  for (auto slept = std::chrono::milliseconds(0); slept < duration && !stopping(); slept += kStep) {
    std::this_thread::sleep_for(std::min(kStep, duration - slept));
  }
}

}  // namespace

std::string NormalizeLogTimestamps(std::string_view logs) {
  std::string out;
  out.reserve(logs.size() + logs.size() / 16);
  while (!logs.empty()) {
    const size_t end = logs.find('\n');
    const std::string_view line =
        logs.substr(0, end == std::string_view::npos ? logs.size() : end + 1);
    logs.remove_prefix(line.size());
    const size_t space = line.find(' ');
    const std::optional<core::TimePoint> time =
        space == std::string_view::npos ? std::nullopt : ParseEngineTime(line.substr(0, space));
    if (time) {
      out += FormatNanos(*time);
      out += line.substr(space);
    } else {
      out += line;
    }
  }
  return out;
}

namespace {

RelayAnswer Do(Engine& engine, const RelayOptions& options, BackgroundJobs& jobs,
               const RelayRequest& work) {
  switch (work.kind) {
    case RelayRequest::Kind::kLogs:
      return DoLogs(engine, work);
    case RelayRequest::Kind::kHttp:
      return DoHttp(engine, options, work);
    case RelayRequest::Kind::kVolumeArchive:
      return ServeVolumeArchive(engine, options.move_dir, work);
    case RelayRequest::Kind::kRemoveVolume:
      return RemoveVolumeHere(engine, options.move_dir, options.shared_volume_dir, work);
    case RelayRequest::Kind::kSnapshotVolume:
      return jobs.RunOrAsk("snapshot " + work.snapshot,
                           [engine = &engine, dir = options.snapshot_dir, work] {
                             return SnapshotVolumeHere(*engine, dir, work);
                           });
    case RelayRequest::Kind::kRestoreSnapshot:
      return jobs.RunOrAsk("restore " + work.volume,
                           [engine = &engine, dir = options.snapshot_dir, work] {
                             return RestoreSnapshotHere(*engine, dir, work);
                           });
    case RelayRequest::Kind::kRemoveSnapshot:
      return RemoveSnapshotHere(options.snapshot_dir, work);
  }
  return ErrorReply(400, "INVALID_ARGUMENT", "an unknown kind of request");
}

}  // namespace

void ServeRelay(const RelayOptions& options, const std::function<std::string()>& node_token,
                Engine& engine, const std::function<bool()>& stopping,
                const std::function<void(const std::string&)>& log) {
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  BackgroundJobs jobs;  // outlives the workers, which hand it work
  std::list<Worker> workers;
  const auto reap = [&workers](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (all || it->done->load()) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  };
  // The long poll's connection: its timeout covers the server's wait and then some.
  core::Result<std::unique_ptr<net::HttpClient>> poller = net::HttpClient::Create(
      options.server_url, {std::chrono::duration_cast<std::chrono::milliseconds>(
                              options.poll_wait + std::chrono::seconds(10))});
  if (!poller.ok()) {
    log("relay: " + poller.status().message() + "; pod logs and ports cannot be reached");
    return;
  }
  bool answering = true;  // whether the server answered the last poll; logged when it changes
  const auto note = [&](bool ok, const std::string& why) {
    if (ok == answering) return;
    answering = ok;
    log(ok ? "relay: the server hands out requests for this node's pods again"
           : "relay: cannot take requests for this node's pods (" + why +
                 "); pod logs and ports cannot be reached meanwhile");
  };
  while (!stopping()) {
    reap(false);
    const std::string token = node_token();
    if (token.empty()) {
      Nap(std::chrono::milliseconds(200), stopping);
      continue;
    }
    const int room = options.max_in_flight - static_cast<int>(workers.size());
    if (room <= 0) {
      Nap(std::chrono::milliseconds(50), stopping);
      continue;
    }
    const net::Headers auth = {{"Authorization", "Bearer " + token}};
    core::Result<net::HttpResponse> polled =
        (*poller)->Send("GET",
                        "/v1/agent/requests?wait_s=" + std::to_string(options.poll_wait.count()) +
                            "&max=" + std::to_string(room),
                        "", auth);
    if (!polled.ok() || polled->status != 200) {
      note(false, polled.ok()
                      ? "HTTP " + std::to_string(polled->status) + " " + polled->body.substr(0, 200)
                      : polled.status().message());
      Nap(std::chrono::seconds(2), stopping);
      continue;
    }
    note(true, "");
    core::Result<wire::RelayBatch> works = wire::DecodeRelayRequests(polled->body);
    if (!works.ok()) {
      // Nothing is answered: the server answers the users 504 once their requests expire.
      log("relay: the server's requests could not be read (" + works.status().message() + ")");
      Nap(std::chrono::seconds(1), stopping);
      continue;
    }
    for (const auto& [id, why] : works->unreadable) {
      log("relay: request " + (id.empty() ? std::string("without an id") : id) +
          " could not be read: " + why);
      if (!id.empty()) {
        PostAnswer(
            options, auth, id, "",
            ErrorReply(502, "BAD_GATEWAY", "the node's agent could not read the request: " + why),
            log);
      }
    }
    for (RelayRequest& work : works->requests) {
      auto done = std::make_shared<std::atomic<bool>>(false);
      workers.push_back(Worker{
          std::thread([&options, &engine, &jobs, &log, auth, done, work = std::move(work)] {
            PostAnswer(options, auth, work.id, work.pod_id, Do(engine, options, jobs, work), log);
            done->store(true);
          }),
          done});
    }
  }
  reap(true);
}

}  // namespace suanli::agent
