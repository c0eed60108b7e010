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

wire::PodViewContext PodViewContextFor(const Principal& viewer, const core::Pod& pod,
                                       core::TimePoint now, std::string node_address) {
  // The link and Jupyter's token open the pod's ports as its owner (on Jupyter: running code), so
  // only a caller who may do that already sees them: its owner with a token that may write, never
  // a read-only token, which would otherwise read its way to the owner's rights.
  const bool owner = !viewer.user_id.empty() && viewer.user_id == pod.owner_id && !viewer.read_only;
  const bool its_node = !viewer.node_id.empty() && viewer.node_id == pod.node_id;
  return {.now = now,
          .node_address = std::move(node_address),
          .with_jupyter_token = owner || its_node,
          .with_link_token = owner};
}

json::object PodView(const Call& call, const core::Pod& pod) {
  // The cost as given: the control plane has added what accrued since the last charge.
  return wire::PodView(pod, PodViewContextFor(call.principal, pod, call.clock().Now(),
                                              call.plane().NodeAddress(pod.node_id)));
}

}  // namespace suanli::server
