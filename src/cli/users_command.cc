// suanli users: accounts and credits (admin), yourself and your spend cap; suanli prices.
#include <memory>
#include <optional>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "core/money.h"

namespace suanli::cli {
namespace {

struct UsersFlags {
  bool json = false;
  std::string id;
  std::string name;
  std::string credits;
  bool admin = false;
  std::string amount;
  std::string note;
  bool debit = false;
  std::optional<int> max_pods;
  std::optional<int> max_pending;
  std::optional<int> max_endpoints;
  std::string budget_action = "notify";
};

// Dollars typed by a person, e.g. "12.50", as micro-dollars; the error names the flag.
core::Result<int64_t> Micros(const std::string& dollars, std::string_view what) {
  core::Result<core::Money> money = core::Money::ParseDollars(dollars);
  if (!money.ok()) return money.status().WithContext(what);
  return money->micros();
}

core::Status RunList(const UsersFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/users"),
      [](const boost::json::value& list) { return UsersTable(JsonArray(list, "users")); });
}

core::Status RunGet(const UsersFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get(IdTarget("users", flags.id)), UserDetail);
}

core::Status RunCreate(const UsersFlags& flags, CommandContext& context) {
  boost::json::object body;
  body["name"] = flags.name;
  if (flags.admin) body["role"] = "admin";
  if (!flags.credits.empty()) {
    core::Result<int64_t> micros = Micros(flags.credits, "--credits");
    if (!micros.ok()) return micros.status();
    body["credits_micros"] = *micros;
  }
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Post("/v1/users", body), [](const boost::json::value& answer) {
        const boost::json::value* user = JsonField(answer, "user");
        const boost::json::value empty;
        const boost::json::value& shown = user ? *user : empty;
        return "created user " + JsonText(shown, "name") + " (" + JsonText(shown, "id") + ", " +
               JsonText(shown, "role") + ") with " + MoneyText(shown, "balance_micros") + "\n" +
               "token (shown only now): " + JsonText(answer, "token") + "\n";
      });
}

core::Status RunCredit(const UsersFlags& flags, CommandContext& context) {
  core::Result<int64_t> micros = Micros(flags.amount, "AMOUNT");
  if (!micros.ok()) return micros.status();
  // A debit is asked for by name: "credit ID -- -5" read as adding credits, yet took $5 away.
  if (*micros < 0) {
    return core::InvalidArgumentError(
        "AMOUNT " + flags.amount +
        " is negative, and credit adds credits; to take money off a balance, give a positive "
        "amount with --debit (suanli users credit ID 5 --debit)");
  }
  boost::json::object body;
  body["amount_micros"] = flags.debit ? -*micros : *micros;
  if (!flags.note.empty()) body["note"] = flags.note;
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json,
                     (*api)->Post(IdTarget("users", flags.id, "/credits"), body),
                     [](const boost::json::value& user) {
                       return JsonText(user, "id") + " " + JsonText(user, "name") + ": balance " +
                              MoneyText(user, "balance_micros") + "\n";
                     });
}

core::Status RunSetCap(const UsersFlags& flags, CommandContext& context) {
  core::Result<int64_t> micros = Micros(flags.amount, "DOLLARS_PER_HOUR");
  if (!micros.ok()) return micros.status();
  boost::json::object body;
  body["spend_cap_per_hour_micros"] = *micros;
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Patch("/v1/users/me", body), UserDetail);
}

core::Status RunSetBudget(const UsersFlags& flags, CommandContext& context) {
  core::Result<int64_t> micros = Micros(flags.amount, "DOLLARS");
  if (!micros.ok()) return micros.status();
  boost::json::object body{{"monthly_budget_micros", *micros}, {"action", flags.budget_action}};
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Put("/v1/users/me/budget", body), UserDetail);
}

core::Status RunSetQuota(const UsersFlags& flags, CommandContext& context) {
  if (!flags.max_pods && !flags.max_pending && !flags.max_endpoints) {
    return core::InvalidArgumentError(
        "give one or more of --pods N, --pending N and --endpoints N (0: the default)");
  }
  boost::json::object body;
  if (flags.max_pods) body["max_pods"] = *flags.max_pods;
  if (flags.max_pending) body["max_pending_pods"] = *flags.max_pending;
  if (flags.max_endpoints) body["max_endpoints"] = *flags.max_endpoints;
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Put(IdTarget("users", flags.id, "/quota"), body),
                     UserDetail);
}

struct PricesFlags {
  bool json = false;
  std::string gpu;
  std::string dollars;
};

}  // namespace

CommandRun DefineUsersCommand(CLI::App& command) {
  auto flags = std::make_shared<UsersFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("list", "List users (admin; the default)",
                        [flags](CommandContext& context) { return RunList(*flags, context); }),
              flags->json);
  CLI::App& get = group.Add("get", "Show a user: balance, cap, notices ('me' for yourself)",
                            [flags](CommandContext& context) { return RunGet(*flags, context); });
  get.add_option("id", flags->id, "User ID or name, or me")->required();
  AddJsonFlag(get, flags->json);

  CLI::App& create =
      group.Add("create", "Create a user and print their API token (admin)",
                [flags](CommandContext& context) { return RunCreate(*flags, context); });
  create.add_option("name", flags->name, "Their name")->required();
  create.add_option("--credits", flags->credits, "Starting credits in dollars, e.g. 12.50");
  create.add_flag("--admin", flags->admin, "Make them an admin");
  AddJsonFlag(create, flags->json);

  CLI::App& credit =
      group.Add("credit", "Add credits to a user's balance, in dollars (admin)",
                [flags](CommandContext& context) { return RunCredit(*flags, context); });
  credit.add_option("id", flags->id, "User ID or name")->required();
  credit.add_option("amount", flags->amount, "Dollars, e.g. 25 or 12.50")->required();
  credit.add_option("--note", flags->note, "Why, for the ledger");
  credit.add_flag("--debit", flags->debit,
                  "Take the amount off the balance instead (a correction or a refund)");
  AddJsonFlag(credit, flags->json);

  CLI::App& quota = group.Add(
      "set-quota", "Set how many pods, pending pods and endpoints a user may have (admin)",
      [flags](CommandContext& context) { return RunSetQuota(*flags, context); });
  quota.add_option("id", flags->id, "User ID or name")->required();
  quota.add_option("--pods", flags->max_pods, "Pods not terminated (0: the default, 100)")
      ->check(CLI::Range(0, 1'000'000'000));
  quota.add_option("--pending", flags->max_pending, "Pods waiting for a GPU (0: the default, 20)")
      ->check(CLI::Range(0, 1'000'000'000));
  quota
      .add_option("--endpoints", flags->max_endpoints, "Serverless endpoints (0: the default, 50)")
      ->check(CLI::Range(0, 1'000'000));
  AddJsonFlag(quota, flags->json);

  CLI::App& cap =
      group.Add("set-cap", "Cap your own spending in dollars per hour (0: no cap)",
                [flags](CommandContext& context) { return RunSetCap(*flags, context); });
  cap.add_option("dollars_per_hour", flags->amount, "Dollars per hour, e.g. 2.50")->required();
  AddJsonFlag(cap, flags->json);
  CLI::App& budget = group.Add(
      "set-budget", "Your monthly budget in dollars (0: none): a warning at 80 %, then --action",
      [flags](CommandContext& context) { return RunSetBudget(*flags, context); });
  budget.add_option("dollars", flags->amount, "Dollars per calendar month (UTC), e.g. 200")
      ->required();
  budget
      .add_option("--action", flags->budget_action,
                  "At 100 %: notify, stop_interruptible or stop_all")
      ->capture_default_str()
      ->check(CLI::IsMember({"notify", "stop_interruptible", "stop_all"}));
  AddJsonFlag(budget, flags->json);
  return group.Build();
}

CommandRun DefinePricesCommand(CLI::App& command) {
  auto flags = std::make_shared<PricesFlags>();
  CommandGroup group(command, /*has_default=*/false);
  AddJsonFlag(command, flags->json);
  CLI::App& set = group.Add(
      "set", "Set what a GPU type rents for per hour (admin)",
      [flags](CommandContext& context) -> core::Status {
        core::Result<int64_t> micros = Micros(flags->dollars, "DOLLARS");
        if (!micros.ok()) return micros.status();
        boost::json::object body;
        body["price_per_hour_micros"] = *micros;
        core::Result<std::unique_ptr<ApiClient>> api = context.Api();
        if (!api.ok()) return api.status();
        return PrintResult(context, flags->json, (*api)->Put(IdTarget("prices", flags->gpu), body),
                           [&flags, &micros](const boost::json::value& answer) {
                             const std::string gpu = JsonText(answer, "gpu");
                             return (gpu.empty() ? flags->gpu : gpu) + ": " +
                                    core::Money::FromMicros(*micros).ToString() + " per GPU-hour\n";
                           });
      });
  set.add_option("gpu", flags->gpu, "GPU type, e.g. 'RTX 4090'")->required();
  set.add_option("dollars", flags->dollars, "Dollars per GPU-hour, e.g. 0.74")->required();
  AddJsonFlag(set, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
