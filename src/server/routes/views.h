// Views: the API's JSON for what the route files of more than one resource answer with.
//
// Internal to the API; the views of one resource only live in its route file.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string_view>
#include <vector>

#include "core/domain.h"
#include "net/http.h"
#include "server/routes/call.h"

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

// A node without its token's hash, with its GPUs' health.
boost::json::object NodeView(const core::Node& node);

// The pod as `call`'s caller may see it (only its owner and its node's agent see the Jupyter
// token), with its node's address, its cost and its uptime now.
boost::json::object PodView(const Call& call, const core::Pod& pod);

}  // namespace suanli::server
