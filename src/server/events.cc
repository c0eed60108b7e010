#include "server/events.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <utility>

namespace suanli::server {

namespace json = boost::json;

core::Event PodStateEvent(const core::Transition& transition) {
  core::Event event;
  event.at = transition.at;
  event.kind = "pod.state";
  event.object_id = transition.pod_id;
  event.user_id = transition.user_id;
  event.message = "pod " + transition.pod_id + " " +
                  std::string(core::PodStateName(transition.from)) + " -> " +
                  std::string(core::PodStateName(transition.to)) + ": " + transition.reason;
  event.detail = json::serialize(json::object{{"from", core::PodStateName(transition.from)},
                                              {"to", core::PodStateName(transition.to)},
                                              {"node_id", transition.node_id},
                                              {"reason", transition.reason}});
  return event;
}

core::Event PodEvent(const core::Pod& pod, std::string_view kind, std::string message) {
  core::Event event;
  event.kind = std::string(kind);
  event.object_id = pod.id;
  event.user_id = pod.owner_id;
  event.detail = json::serialize(json::object{{"pod_name", pod.name},
                                              {"state", core::PodStateName(pod.state)},
                                              {"node_id", pod.node_id},
                                              {"reason", message}});
  event.message = "pod " + pod.id + " " + std::move(message);
  return event;
}

core::Event MoveEvent(const core::Pod& pod, std::string_view kind, std::string message,
                      const MoveFigures& figures) {
  core::Event event;
  event.kind = std::string(kind);
  event.object_id = pod.id;
  event.user_id = pod.owner_id;
  event.message = "pod " + pod.id + " " + std::move(message);
  const double mb_per_s =
      figures.seconds > 0 ? static_cast<double>(figures.bytes) / 1e6 / figures.seconds : 0;
  event.detail = json::serialize(json::object{{"move_id", figures.move_id},
                                              {"volume", figures.volume},
                                              {"from_node_id", figures.from_node_id},
                                              {"to_node_id", figures.to_node_id},
                                              {"bytes", figures.bytes},
                                              {"total_bytes", figures.total_bytes},
                                              {"seconds", figures.seconds},
                                              {"mb_per_s", mb_per_s},
                                              {"restarts", figures.restarts},
                                              {"sha256", figures.sha256}});
  return event;
}

core::Event LowBalanceEvent(const core::User& user, core::Money balance, core::Money rate,
                            int64_t runway_s) {
  core::Event event;
  event.kind = "balance.low";
  event.object_id = user.id;
  event.user_id = user.id;
  event.message = "your balance of " + balance.ToString() + " lasts about " +
                  std::to_string(runway_s / 60) + " more minutes at " + rate.ToString() +
                  "/h; add credits, or your pods stop when it reaches zero";
  event.detail = json::serialize(json::object{{"balance_micros", balance.micros()},
                                              {"spend_rate_per_hour_micros", rate.micros()},
                                              {"runway_s", runway_s}});
  return event;
}

core::Event NodeEvent(const core::Node& node, std::string_view kind, std::string message) {
  core::Event event;
  event.kind = std::string(kind);
  event.object_id = node.id;
  event.message = "node " + node.name + " " + std::move(message);
  event.detail =
      json::serialize(json::object{{"node_name", node.name}, {"drain_reason", node.drain_reason}});
  return event;
}

core::Event VolumeEvent(const core::Volume& volume, std::string_view kind, std::string message) {
  core::Event event;
  event.kind = std::string(kind);
  event.object_id = volume.id;
  event.user_id = volume.owner_id;
  event.message = "volume " + volume.name + " " + std::move(message);
  event.detail = json::serialize(
      json::object{{"volume_id", volume.id}, {"snapshot_id", volume.restored_from}});
  return event;
}

core::Event SnapshotEvent(const core::Snapshot& snapshot, std::string_view kind,
                          std::string message) {
  core::Event event;
  event.kind = std::string(kind);
  event.object_id = snapshot.id;
  event.user_id = snapshot.owner_id;
  event.message = "snapshot " + snapshot.name + " (" + snapshot.id + ") of volume " +
                  snapshot.volume_name + " " + std::move(message);
  event.detail = json::serialize(json::object{{"snapshot_id", snapshot.id},
                                              {"volume_id", snapshot.volume_id},
                                              {"node_id", snapshot.node_id},
                                              {"size_bytes", snapshot.size_bytes},
                                              {"sha256", snapshot.sha256}});
  return event;
}

}  // namespace suanli::server
