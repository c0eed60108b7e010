#include "server/routes/views.h"

#include <boost/json/serialize.hpp>

#include "server/domain_json.h"

namespace suanli::server {

namespace json = boost::json;

net::HttpResponse JsonResponse(int status, const json::value& body) {
  net::HttpResponse response;
  response.status = status;
  response.body = json::serialize(body);
  return response;
}

json::object NodeView(const core::Node& node) {
  json::object view = ToJson(node);
  view.erase("token_hash");
  json::array health;
  for (const core::GpuHealth& reading : node.gpu_health) health.emplace_back(ToJson(reading));
  view["gpu_health"] = std::move(health);
  return view;
}

json::object PodView(const Call& call, const core::Pod& pod) {
  json::object view = PodViewWithoutTime(pod);
  AddPodSecrets(call.principal, pod, view);
  view["node_address"] = call.plane().NodeAddress(pod.node_id);
  view["cost_micros"] = pod.cost.micros();  // the control plane adds what has accrued
  view["uptime_s"] = UptimeSeconds(pod, call.clock().Now());
  return view;
}

}  // namespace suanli::server
