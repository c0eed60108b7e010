// suanli events: the event stream (why a pod stopped, what happened to a node), as a table, as
// JSON, or followed (-f) by polling with ?after=. suanli webhooks: where the events are POSTed.
// suanli audit: the audit log (admin), as a table, JSON or CSV.
#include <algorithm>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/text_table.h"
#include "net/http_client.h"

namespace suanli::cli {
namespace {

struct EventsFlags {
  bool json = false;
  bool follow = false;
  std::string pod;
  std::string kind;
  std::string since;
  std::string user;
  int limit = 50;
  bool csv = false;
  // webhooks
  std::string url;
  std::vector<std::string> kinds;
  std::string id;
};

std::string Query(const std::vector<std::pair<std::string, std::string>>& parts) {
  std::string query;
  for (const auto& [name, value] : parts) {
    if (value.empty()) continue;
    query += (query.empty() ? "?" : "&") + name + "=" + net::PercentEncode(value);
  }
  return query;
}

core::Status RunEvents(const EventsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  const std::vector<std::pair<std::string, std::string>> filters = {
      {"pod", flags.pod}, {"kind", flags.kind}, {"since", flags.since}, {"user", flags.user}};
  auto with = [&filters](std::pair<std::string, std::string> paging) {
    std::vector<std::pair<std::string, std::string>> parts = filters;
    parts.push_back(std::move(paging));
    return "/v1/events" + Query(parts);
  };
  core::Result<boost::json::value> first = (*api)->Get(with({"tail", std::to_string(flags.limit)}));
  if (!flags.follow) {
    return PrintResult(context, flags.json, first, [](const boost::json::value& answer) {
      return EventsTable(JsonArray(answer, "events"));
    });
  }
  // Followed: each event a line (a JSON object per line with --json), polled every 2 s.
  int64_t after = 0;
  auto print = [&](const core::Result<boost::json::value>& answer) -> core::Status {
    if (!answer.ok()) return answer.status();
    for (const boost::json::value& event : JsonArray(*answer, "events")) {
      context.out << (flags.json ? boost::json::serialize(event) + "\n" : EventLine(event));
      after = std::max(after, JsonInteger(event, "id"));
    }
    context.out.flush();
    return core::Status::Ok();
  };
  SUANLI_RETURN_IF_ERROR(print(first));
  // Until Ctrl-C, which ends the process.
  while (true) {
    context.api_env->sleep(std::chrono::seconds(2));
    // A full page means more may wait: ask again at once.
    bool more = true;
    while (more) {
      core::Result<boost::json::value> next = (*api)->Get(with({"after", std::to_string(after)}));
      SUANLI_RETURN_IF_ERROR(print(next));
      more = JsonField(*next, "next_after") != nullptr;
    }
  }
}

core::Status RunAudit(const EventsFlags& flags, CommandContext& context) {
  if (flags.csv && flags.json)
    return core::InvalidArgumentError("choose --csv or --json, not both");
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  const std::string target = "/v1/audit" + Query({{"tail", std::to_string(flags.limit)},
                                                  {"since", flags.since},
                                                  {"user", flags.user},
                                                  {"format", flags.csv ? "csv" : ""}});
  if (flags.csv) {
    core::Result<std::string> csv = (*api)->GetText(target);
    if (!csv.ok()) return csv.status();
    context.out << *csv;
    return core::Status::Ok();
  }
  return PrintResult(
      context, flags.json, (*api)->Get(target),
      [](const boost::json::value& answer) { return AuditTable(JsonArray(answer, "entries")); });
}

using Align = TextTable::Align;

std::string WebhooksTable(const boost::json::array& hooks) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("URL", Align::kLeft);
  table.AddColumn("KINDS", Align::kLeft);
  table.AddColumn("DELIVERED THROUGH", Align::kRight);
  table.AddColumn("LAST TRY", Align::kLeft);
  for (const boost::json::value& hook : hooks) {
    std::string kinds;
    for (const boost::json::value& kind : JsonArray(hook, "kinds")) {
      kinds += (kinds.empty() ? "" : ",") + std::string(kind.is_string() ? kind.as_string() : "");
    }
    const boost::json::array& tries = JsonArray(hook, "deliveries");
    std::string last = "-";
    if (!tries.empty()) {
      const std::string error = JsonText(tries.back(), "error");
      last = JsonText(tries.back(), "at") + " " +
             (error.empty() ? "HTTP " + JsonText(tries.back(), "status") : error);
    }
    table.AddRow({JsonText(hook, "id"), JsonText(hook, "url"), kinds.empty() ? "all" : kinds,
                  JsonText(hook, "delivered_through"), last});
  }
  return table.Render();
}

core::Status RunWebhooks(const EventsFlags& flags, CommandContext& context, std::string_view verb) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  if (verb == "create") {
    boost::json::array kinds;
    for (const std::string& kind : flags.kinds) kinds.emplace_back(kind);
    boost::json::object body{{"url", flags.url}, {"kinds", std::move(kinds)}};
    return PrintResult(context, flags.json, (*api)->Post("/v1/webhooks", body),
                       [](const boost::json::value& hook) {
                         return "webhook " + JsonText(hook, "id") +
                                " created; each body is signed: X-Suanli-Signature is sha256= and "
                                "the HMAC-SHA256 of the body with the secret\n" +
                                JsonText(hook, "secret") + "\n";
                       });
  }
  if (verb == "rm") {
    return PrintResult(
        context, flags.json, (*api)->Delete(IdTarget("webhooks", flags.id)),
        [&flags](const boost::json::value&) { return "removed webhook " + flags.id + "\n"; });
  }
  return PrintResult(context, flags.json, (*api)->Get("/v1/webhooks"),
                     [](const boost::json::value& answer) {
                       return WebhooksTable(JsonArray(answer, "webhooks"));
                     });
}

void AddCommonFlags(CLI::App& command, EventsFlags& flags) {
  command.add_option("--since", flags.since, "Only from this time on (2026-12-02T14:00:00Z)");
  command.add_option("--user", flags.user, "Only this user's (admin; a user id)");
  command.add_option("--limit", flags.limit, "Show the newest N (50; at most 1000)")
      ->check(CLI::Range(1, 1000));
}

}  // namespace

CommandRun DefineEventsCommand(CLI::App& command) {
  auto flags = std::make_shared<EventsFlags>();
  command.add_flag("-f,--follow", flags->follow, "Keep printing new events as they happen");
  command.add_option("--pod", flags->pod, "Only this pod's (or node's, or user's: any object id)");
  command.add_option("--kind", flags->kind, "Only this kind (pod.state, pod.idle_stop, ...)");
  AddCommonFlags(command, *flags);
  AddJsonFlag(command, flags->json);
  return [flags](CommandContext& context) { return RunEvents(*flags, context); };
}

CommandRun DefineWebhooksCommand(CLI::App& command) {
  auto flags = std::make_shared<EventsFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(
      group.Add("list", "Your webhooks and their last try (the default)",
                [flags](CommandContext& context) { return RunWebhooks(*flags, context, "list"); }),
      flags->json);
  CLI::App& create = group.Add(
      "create", "POST your events to URL (http://), signed, in order, at least once",
      [flags](CommandContext& context) { return RunWebhooks(*flags, context, "create"); });
  create.add_option("url", flags->url, "http://HOST[:PORT]/PATH")->required();
  create.add_option("--kind", flags->kinds, "Only events of this kind (repeatable); all without");
  AddJsonFlag(create, flags->json);
  CLI::App& remove = group.Add("rm", "Remove a webhook", [flags](CommandContext& context) {
    return RunWebhooks(*flags, context, "rm");
  });
  remove.add_option("id", flags->id, "Webhook ID")->required();
  AddJsonFlag(remove, flags->json);
  return group.Build();
}

CommandRun DefineAuditCommand(CLI::App& command) {
  auto flags = std::make_shared<EventsFlags>();
  AddCommonFlags(command, *flags);
  command.add_flag("--csv", flags->csv, "Print CSV, for a spreadsheet or an archive");
  AddJsonFlag(command, flags->json);
  return [flags](CommandContext& context) { return RunAudit(*flags, context); };
}

}  // namespace suanli::cli
