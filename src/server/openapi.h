// OpenAPI: the API's route table as an OpenAPI 3 document (served at /v1/openapi.json), so the
// document cannot drift from the routes: each route is an operation with its path parameters, its
// access (x-suanli-access, and a bearer security requirement unless public) and the error shape.
#pragma once

#include <boost/json/object.hpp>
#include <span>

#include "server/api.h"

namespace suanli::server {

// The document for `routes`, in their order; "{path...}" is written "{path}".
boost::json::object MakeOpenApiDocument(std::span<const RouteInfo> routes);

}  // namespace suanli::server
