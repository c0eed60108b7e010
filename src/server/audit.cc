#include "server/audit.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace suanli::server {

namespace json = boost::json;

bool IsAudited(const RouteInfo& route) {
  if (route.method == "GET" || route.method == "HEAD") return false;
  if (route.pattern == "/v1/advise") return false;  // a POST for its body: it changes nothing
  return route.access == RouteAccess::kUser || route.access == RouteAccess::kAdmin ||
         route.access == RouteAccess::kJoin;
}

namespace {

// body[outer][key] (or body[key] with no outer) when it is a string; "" otherwise, also for a
// body that is not JSON.
std::string StringIn(std::string_view body, std::string_view outer, std::string_view key) {
  boost::system::error_code error;
  const json::value value = json::parse(body, error);
  if (error || !value.is_object()) return "";
  const json::object* object = &value.as_object();
  if (!outer.empty()) {
    const json::value* inner = object->if_contains(outer);
    if (inner == nullptr || !inner->is_object()) return "";
    object = &inner->as_object();
  }
  const json::value* found = object->if_contains(key);
  return found != nullptr && found->is_string() ? std::string(found->as_string()) : "";
}

// The id of what a 201 created. The API's views write "id" first, so it is read from the body's
// start; parsing a pod's whole view here was a tenth of a create's CPU (perf). Any other body is
// parsed.
std::string CreatedId(std::string_view body) {
  constexpr std::string_view kLead = R"({"id":")";
  if (body.starts_with(kLead)) {
    const std::string_view rest = body.substr(kLead.size());
    const size_t end = rest.find_first_of("\"\\");
    if (end != std::string_view::npos && rest[end] == '"') return std::string(rest.substr(0, end));
  }
  return StringIn(body, "", "id");
}

}  // namespace

core::AuditEntry AuditEntryFor(const RouteInfo& route, const Principal& caller,
                               const std::vector<std::string>& params, int status,
                               std::string_view body) {
  core::AuditEntry entry;
  entry.user_id = caller.user_id;
  entry.token_id = caller.token_id;
  entry.action = std::string(route.method) + " " + std::string(route.pattern);
  entry.status = status;
  if (!params.empty()) {
    entry.object_id = params.front();
  } else if (status == 201) {
    entry.object_id = CreatedId(body);
  }
  if (status >= 400) entry.error_code = StringIn(body, "error", "code");
  return entry;
}

}  // namespace suanli::server
