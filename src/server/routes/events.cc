// Routes for what happened: the event stream (a person's own, an admin's all) and the audit log
// (admins). Both are pages in id order, as GET /v1/pods: ?limit= and ?after=, or ?tail=N for the
// newest N; the answer's `next_after` is there only when more follow.
#include <fmt/format.h>

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

constexpr int64_t kMaxPage = 1000;
constexpr int64_t kDefaultPage = 100;

// The paging and time parameters both routes share.
struct Page {
  int64_t after = 0;
  size_t limit = kDefaultPage;
  bool newest = false;
  std::optional<core::TimePoint> since;
};

Result<Page> ReadPage(const net::HttpRequest& request) {
  Page page;
  const std::optional<std::string> after = request.QueryValue("after");
  const std::optional<std::string> limit = request.QueryValue("limit");
  const std::optional<std::string> tail = request.QueryValue("tail");
  const std::optional<std::string> since = request.QueryValue("since");
  if (tail && (after || limit)) {
    return core::InvalidArgumentError(
        "tail (the newest N) cannot be combined with after or limit; page with after and limit, "
        "or ask for the newest with tail");
  }
  if (after) {
    const std::optional<int64_t> parsed = ParseInteger(*after, 0, INT64_MAX);
    if (!parsed) {
      return core::InvalidArgumentError("after must be an id (a whole number from 0), not '" +
                                        *after + "'");
    }
    page.after = *parsed;
  }
  if (const std::optional<std::string>& count = tail ? tail : limit) {
    const std::optional<int64_t> parsed = ParseInteger(*count, 1, kMaxPage);
    if (!parsed) {
      return core::InvalidArgumentError(std::string(tail ? "tail" : "limit") +
                                        " must be a whole number from 1 to " +
                                        std::to_string(kMaxPage) + ", not '" + *count + "'");
    }
    page.limit = static_cast<size_t>(*parsed);
    page.newest = tail.has_value();
  }
  if (since) {
    Result<core::TimePoint> time = core::ParseTime(*since);
    if (!time.ok()) {
      return core::InvalidArgumentError("since must be a time such as 2026-12-02T14:46:25Z, not '" +
                                        *since + "'");
    }
    page.since = *time;
  }
  return page;
}

// Both queries take the page the same way.
template <typename Query>
Query QueryFor(const Page& page) {
  Query query;
  query.after = page.after;
  query.limit = page.limit;
  query.newest = page.newest;
  query.since = page.since;
  return query;
}

// {"<key>": [...], "next_after": id} with next_after when the page is full (more may follow; a
// client asks again with it until it is absent). One more row than shown is not read: a full
// last page costs one more request with an empty answer.
template <typename T, typename View>
json::value PageOf(std::string_view key, const std::vector<T>& rows, const Page& page, View view) {
  json::value body = ListOf(key, rows, view);
  if (!page.newest && !rows.empty() && rows.size() == page.limit) {
    body.as_object()["next_after"] = rows.back().seq;
  }
  return body;
}

void ListEvents(Call& call) {
  Result<Page> page = ReadPage(call.request);
  if (!page.ok()) return call.Respond(page.status());
  store::EventQuery query = QueryFor<store::EventQuery>(*page);
  query.kind = call.request.QueryValue("kind").value_or("");
  query.object_id = call.request.QueryValue("pod").value_or("");
  if (query.object_id.empty()) query.object_id = call.request.QueryValue("object").value_or("");
  query.user_id = call.request.QueryValue("user").value_or("");
  Result<std::vector<core::Event>> events = call.plane().Events(call.principal, query);
  if (!events.ok()) return call.Respond(events.status());
  call.Respond(PageOf("events", *events, *page, wire::EventView), call.queue().submitted());
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void ListAudit(Call& call) {
  Result<Page> page = ReadPage(call.request);
  if (!page.ok()) return call.Respond(page.status());
  const std::string format = call.request.QueryValue("format").value_or("json");
  if (format != "json" && format != "csv") {
    return call.Respond(
        core::InvalidArgumentError("format must be json or csv, not '" + format + "'"));
  }
  store::AuditQuery query = QueryFor<store::AuditQuery>(*page);
  query.user_id = call.request.QueryValue("user").value_or("");
  Result<std::vector<core::AuditEntry>> entries = call.plane().AuditLog(call.principal, query);
  if (!entries.ok()) return call.Respond(entries.status());
  if (format == "csv") {
    net::HttpResponse response;
    response.content_type = "text/csv";
    response.headers.emplace_back("Content-Disposition",
                                  "attachment; filename=\"suanli-audit.csv\"");
    response.body = "id,time,user_id,token_id,action,object_id,status,error_code\n";
    for (const core::AuditEntry& entry : *entries) {
      response.body +=
          fmt::format("{},{},{},{},{},{},{},{}\n", entry.seq, core::FormatTime(entry.at),
                      CsvField(entry.user_id), CsvField(entry.token_id), CsvField(entry.action),
                      CsvField(entry.object_id), entry.status, CsvField(entry.error_code));
    }
    if (!page->newest && !entries->empty() && entries->size() == page->limit) {
      response.headers.emplace_back("X-Suanli-Next-After", std::to_string(entries->back().seq));
    }
    return call.Respond(std::move(response));
  }
  call.Respond(PageOf("entries", *entries, *page, wire::AuditEntryView), call.queue().submitted());
}

// clang-format off
constexpr Route kEventRoutes[] = {
  {{"GET", "/v1/events", RouteAccess::kUser, "Events of your pods and account (?kind=&pod=&since=&after=&limit=|tail=)"}, ListEvents},
  {{"GET", "/v1/audit", RouteAccess::kAdmin, "Who called which mutating route, and how it ended (?format=csv)"}, ListAudit},
};
// clang-format on

}  // namespace

std::span<const Route> EventRoutes() { return kEventRoutes; }

}  // namespace suanli::server
