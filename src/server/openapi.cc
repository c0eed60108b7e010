#include "server/openapi.h"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cctype>
#include <string>
#include <string_view>

namespace suanli::server {
namespace {

namespace json = boost::json;

// The pattern as an OpenAPI path: "{path...}" is written "{path}" (with a description).
std::string OpenApiPath(std::string_view pattern) {
  std::string path(pattern);
  if (const size_t dots = path.find("...}"); dots != std::string::npos) path.erase(dots, 3);
  return path;
}

std::string_view AccessName(RouteAccess access) {
  switch (access) {
    case RouteAccess::kPublic:
      return "public";
    case RouteAccess::kUser:
      return "user";
    case RouteAccess::kAdmin:
      return "admin";
    case RouteAccess::kNode:
      return "node";
    case RouteAccess::kJoin:
      return "join";
    case RouteAccess::kUserOrPodLink:
      return "user or pod link";
    case RouteAccess::kWorker:
      return "serverless worker";
  }
  return "public";
}

}  // namespace

json::object MakeOpenApiDocument(std::span<const RouteInfo> routes) {
  json::object paths;
  for (const RouteInfo& route : routes) {
    json::object operation{{"summary", route.summary},
                           {"x-suanli-access", AccessName(route.access)}};
    json::array parameters;
    std::string_view rest = route.pattern;
    while (true) {
      const size_t open = rest.find('{');
      if (open == std::string_view::npos) break;
      const size_t close = rest.find('}', open);
      std::string_view name = rest.substr(open + 1, close - open - 1);
      json::object parameter{
          {"in", "path"}, {"required", true}, {"schema", json::object{{"type", "string"}}}};
      if (name.ends_with("...")) {
        name.remove_suffix(3);
        parameter["description"] = "The rest of the path, slashes included; may be empty";
      }
      parameter["name"] = name;
      parameters.emplace_back(std::move(parameter));
      rest.remove_prefix(close + 1);
    }
    if (!parameters.empty()) operation["parameters"] = std::move(parameters);
    if (route.access != RouteAccess::kPublic) {
      operation["security"] = json::array{json::object{{"bearer", json::array{}}}};
    }
    if (route.method == "POST" || route.method == "PUT" || route.method == "PATCH") {
      // A proxied body is the pod's business, in any format.
      const bool proxied = route.pattern.ends_with("...}");
      operation["requestBody"] = json::object{
          {"content", json::object{{proxied ? "*/*" : "application/json",
                                    json::object{{"schema", json::object{{"type", "object"}}}}}}}};
    }
    operation["responses"] = json::object{
        {"200", json::object{{"description", "OK (201 for a create)"}}},
        {"default",
         json::object{
             {"description", "An error"},
             {"content",
              json::object{{"application/json",
                            json::object{{"schema", json::object{{"$ref",
                                                                  "#/components/"
                                                                  "schemas/Error"}}}}}}}}}};
    std::string method(route.method);
    for (char& c : method) c = static_cast<char>(std::tolower(c));
    json::value& path = paths[OpenApiPath(route.pattern)];
    if (!path.is_object()) path = json::object();
    path.as_object()[method] = std::move(operation);
  }
  json::object string_type{{"type", "string"}};
  json::object error_fields{{"code", string_type}, {"message", string_type}};
  json::object error_body{{"type", "object"},
                          {"required", json::array{"code", "message"}},
                          {"properties", std::move(error_fields)}};
  json::object error_schema{{"type", "object"},
                            {"required", json::array{"error"}},
                            {"properties", json::object{{"error", std::move(error_body)}}}};
  return json::object{
      {"openapi", "3.0.3"},
      {"info", json::object{{"title", "suanli API"},
                            {"version", "1"},
                            {"description",
                             "A self-hosted GPU cloud. Money is integer micro-dollars (*_micros); "
                             "times are RFC 3339 UTC."}}},
      {"paths", std::move(paths)},
      {"components",
       json::object{
           {"securitySchemes",
            json::object{{"bearer", json::object{{"type", "http"}, {"scheme", "bearer"}}}}},
           {"schemas", json::object{{"Error", std::move(error_schema)}}}}}};
}

}  // namespace suanli::server
