// Views: how the route files answer with the API's views (wire/views.h): JSON responses, lists,
// and a pod as its caller may see it.
//
// Internal to the API.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string_view>
#include <vector>

#include "core/domain.h"
#include "net/http.h"
#include "server/routes/call.h"
#include "wire/views.h"

namespace suanli::server {

// `body` serialized, with `status`.
net::HttpResponse JsonResponse(int status, const boost::json::value& body);

// {key: [view(item), ...]}.
template <typename T, typename View>
boost::json::value ListOf(std::string_view key, const std::vector<T>& items, View view) {
  boost::json::array array;
  array.reserve(items.size());
  for (const T& item : items) array.emplace_back(view(item));
  return boost::json::object{{key, std::move(array)}};
}

// The pod as `call`'s caller may see it, with its node's address, its cost and its uptime now
// (wire::PodView). Its owner sees the Jupyter token and the link token; its node's agent the
// Jupyter token, to hand to the container. Admins run the hosts but get neither through the API.
boost::json::object PodView(const Call& call, const core::Pod& pod);
// The same rules for any viewer (the pod list).
wire::PodViewContext PodViewContextFor(const Principal& viewer, const core::Pod& pod,
                                       core::TimePoint now, std::string node_address);

}  // namespace suanli::server
