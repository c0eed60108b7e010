// Routes for money: a person's balance, ledger and usage, and the admin's GPU prices.
#include <fmt/format.h>

#include <boost/json/value.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "billing/meter.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

void Balance(Call& call) {
  Result<Written<core::User>> user = call.plane().GetUser(call.principal, "me");
  if (!user.ok()) return call.Respond(user.status());
  const core::Money rate = call.plane().SpendRate(call.principal.user_id);
  const core::Duration runway = billing::Runway(user->value.balance, rate);
  json::object body{
      {"balance_micros", user->value.balance.micros()},
      {"spend_rate_per_hour_micros", rate.micros()},
      {"spend_cap_per_hour_micros", user->value.spend_cap_per_hour.micros()},
      {"storage_per_gb_month_micros", call.plane().storage_price().micros()},
      {"minimum_runway_s",
       std::chrono::duration_cast<std::chrono::seconds>(call.plane().minimum_runway()).count()}};
  if (runway == core::Duration::max()) {
    body["runway_s"] = nullptr;
  } else {
    body["runway_s"] = std::chrono::duration_cast<std::chrono::seconds>(runway).count();
  }
  body["notices"] = wire::UserView(user->value)["notices"];
  call.Respond(json::value(std::move(body)), user->sequence);
}

void LedgerEntries(Call& call) {
  Result<std::vector<core::LedgerEntry>> entries =
      call.plane().Ledger(call.principal, call.request.QueryValue("user").value_or(""));
  if (!entries.ok()) return call.Respond(entries.status());
  call.Respond(ListOf("entries", *entries, wire::LedgerEntryView), call.queue().submitted());
}

void Usage(Call& call) {
  const std::string by = call.request.QueryValue("by").value_or("pod");
  const std::string format = call.request.QueryValue("format").value_or("json");
  if ((by != "pod" && by != "day") || (format != "json" && format != "csv")) {
    return call.Respond(
        core::InvalidArgumentError("usage: by must be pod or day, format json or csv"));
  }
  Result<std::vector<UsageRow>> rows =
      call.plane().Usage(call.principal, call.request.QueryValue("user").value_or(""),
                         by == "pod" ? ControlPlane::UsageBy::kPod : ControlPlane::UsageBy::kDay);
  if (!rows.ok()) return call.Respond(rows.status());
  if (format == "csv") {
    net::HttpResponse response;
    response.content_type = "text/csv";
    response.headers.emplace_back("Content-Disposition",
                                  "attachment; filename=\"suanli-usage-by-" + by + ".csv\"");
    response.body = by + ",gpu_seconds,gpu_usd,storage_usd,total_usd\n";
    auto dollars = [](core::Money amount) {
      return fmt::format("{}.{:06d}", amount.micros() / 1'000'000, amount.micros() % 1'000'000);
    };
    for (const UsageRow& row : *rows) {
      response.body += fmt::format("{},{},{},{},{}\n", row.key, row.gpu_seconds, dollars(row.gpu),
                                   dollars(row.storage), dollars(row.gpu + row.storage));
    }
    call.Respond(std::move(response));
    return;
  }
  call.Respond(ListOf("usage", *rows,
                      [](const UsageRow& row) {
                        return json::object{{"key", row.key},
                                            {"gpu_seconds", row.gpu_seconds},
                                            {"gpu_micros", row.gpu.micros()},
                                            {"storage_micros", row.storage.micros()},
                                            {"total_micros", (row.gpu + row.storage).micros()},
                                            {"unbilled_micros", row.unbilled.micros()}};
                      }),
               call.queue().submitted());
}

void SetPrice(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  core::Money price;
  fields.Micros("price_per_hour_micros", &price, {.required = true});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  const std::string gpu = call.param(0);
  call.Respond(call.plane().SetGpuPrice(call.principal, gpu, price), [&](core::Money set) {
    return json::object{{"gpu", gpu}, {"price_per_hour_micros", set.micros()}};
  });
}

// clang-format off
constexpr Route kBillingRoutes[] = {
  {{"GET", "/v1/billing/balance", RouteAccess::kUser, "Balance, spend rate and runway"}, Balance},
  {{"GET", "/v1/billing/ledger", RouteAccess::kUser, "Credits and charges (?user= for admins)"}, LedgerEntries},
  {{"GET", "/v1/billing/usage", RouteAccess::kUser, "Usage by pod or day (?by=pod|day&format=csv)"}, Usage},
};
// clang-format on

// clang-format off
constexpr Route kPriceRoutes[] = {
  {{"PUT", "/v1/prices/{gpu}", RouteAccess::kAdmin, "Set the hourly price of a GPU type"}, SetPrice},
};
// clang-format on

}  // namespace

std::span<const Route> BillingRoutes() { return kBillingRoutes; }
std::span<const Route> PriceRoutes() { return kPriceRoutes; }

}  // namespace suanli::server
