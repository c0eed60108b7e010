#include "server/routes/views.h"

#include <boost/json/serialize.hpp>

namespace suanli::server {

namespace json = boost::json;

net::HttpResponse JsonResponse(int status, const json::value& body) {
  net::HttpResponse response;
  response.status = status;
  response.body = json::serialize(body);
  return response;
}

json::object PodView(const Call& call, const core::Pod& pod) {
  const Principal& viewer = call.principal;
  const bool owner = !viewer.user_id.empty() && viewer.user_id == pod.owner_id;
  const bool its_node = !viewer.node_id.empty() && viewer.node_id == pod.node_id;
  // The cost as given: the control plane has added what accrued since the last charge.
  return wire::PodView(pod, {.now = call.clock().Now(),
                             .node_address = call.plane().NodeAddress(pod.node_id),
                             .with_jupyter_token = owner || its_node,
                             .with_link_token = owner});
}

}  // namespace suanli::server
