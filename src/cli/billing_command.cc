// suanli billing: balance and runway, usage by pod or day (table, JSON or CSV), and the ledger.
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "net/http_client.h"

namespace suanli::cli {
namespace {

struct BillingFlags {
  bool json = false;
  std::string by = "pod";
  bool csv = false;
  std::string user;
};

// "?by=pod&user=u_1": only the parts that are set.
std::string Query(std::vector<std::pair<std::string, std::string>> parts) {
  std::string query;
  for (const auto& part : parts) {
    if (part.second.empty()) continue;
    query += (query.empty() ? "?" : "&") + part.first + "=" + net::PercentEncode(part.second);
  }
  return query;
}

core::Status RunBalance(const BillingFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get("/v1/billing/balance"), BalanceDetail);
}

core::Status RunUsage(const BillingFlags& flags, CommandContext& context) {
  if (flags.csv && flags.json)
    return core::InvalidArgumentError("choose --csv or --json, not both");
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  if (flags.csv) {
    core::Result<std::string> csv = (*api)->GetText(
        "/v1/billing/usage" + Query({{"by", flags.by}, {"format", "csv"}, {"user", flags.user}}));
    if (!csv.ok()) return csv.status();
    context.out << *csv;
    if (!csv->empty() && csv->back() != '\n') context.out << "\n";
    return core::Status::Ok();
  }
  return PrintResult(
      context, flags.json,
      (*api)->Get("/v1/billing/usage" + Query({{"by", flags.by}, {"user", flags.user}})),
      [&flags](const boost::json::value& answer) {
        return UsageTable(JsonArray(answer, "usage"), flags.by);
      });
}

core::Status RunLedger(const BillingFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/billing/ledger" + Query({{"user", flags.user}})),
      [](const boost::json::value& answer) { return LedgerTable(JsonArray(answer, "entries")); });
}

}  // namespace

CommandRun DefineBillingCommand(CLI::App& command) {
  auto flags = std::make_shared<BillingFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("balance", "Balance, spending per hour and runway (the default)",
                        [flags](CommandContext& context) { return RunBalance(*flags, context); }),
              flags->json);
  CLI::App& usage =
      group.Add("usage", "What was charged, by pod or by day",
                [flags](CommandContext& context) { return RunUsage(*flags, context); });
  usage.add_option("--by", flags->by, "pod or day (pod)")->check(CLI::IsMember({"pod", "day"}));
  usage.add_flag("--csv", flags->csv, "Print CSV, for a spreadsheet");
  usage.add_option("--user", flags->user, "Another user's usage (admin)");
  AddJsonFlag(usage, flags->json);
  CLI::App& ledger =
      group.Add("ledger", "Every credit and charge, in order",
                [flags](CommandContext& context) { return RunLedger(*flags, context); });
  ledger.add_option("--user", flags->user, "Another user's ledger (admin)");
  AddJsonFlag(ledger, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
