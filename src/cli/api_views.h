// How the CLI shows the API's JSON to people: tables and key-value blocks, money in dollars.
//
// Pure functions of the server's documents, so tests render fixtures. They never throw and never
// fail: a field the server did not send shows as empty (or "-"), because an older or newer server
// must still get a readable table.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace suanli::cli {

// Field access that tolerates anything: a missing key, null, or a value of another kind.
const boost::json::value* JsonField(const boost::json::value& object, std::string_view key);
// Strings as they are, integers in decimal, booleans as true/false, anything else "".
std::string JsonText(const boost::json::value& object, std::string_view key);
int64_t JsonInteger(const boost::json::value& object, std::string_view key);  // 0 if absent
bool JsonBool(const boost::json::value& object, std::string_view key);        // false if absent
// The array under `key`, or an empty one.
const boost::json::array& JsonArray(const boost::json::value& object, std::string_view key);

// Micro-dollars under `key` as "$1.25"; "-" when absent or null.
std::string MoneyText(const boost::json::value& object, std::string_view key);
// 45 -> "45s", 192 -> "3m12s", 7500 -> "2h05m", 273600 -> "3d04h"; negative counts as 0.
std::string DurationText(int64_t seconds);
// "2026-12-02T14:46:25.123Z" -> "2026-12-02 14:46"; other text as it is; "" -> "-".
std::string TimeText(std::string_view rfc3339);
// A pod's GPUs: "1x RTX 4090", or "-" for none.
std::string PodGpuText(const boost::json::value& pod);

// Tables of API lists (the arrays inside {"pods": [...]} and so on).
std::string PodsTable(const boost::json::array& pods);
std::string TemplatesTable(const boost::json::array& templates);
// `pods` are the server's pods (an admin sees all): the server sends no count of a node's GPUs in
// use, so USED counts the distinct GPU indices of the pods bound to each node, as the console does.
std::string NodesTable(const boost::json::array& nodes, const boost::json::array& pods);
std::string UsersTable(const boost::json::array& users);
std::string TokensTable(const boost::json::array& tokens);
std::string SshKeysTable(const boost::json::array& keys);
std::string JoinTokensTable(const boost::json::array& tokens);
// `by` is "pod" or "day" and names the first column.
std::string UsageTable(const boost::json::array& usage, std::string_view by);
std::string LedgerTable(const boost::json::array& entries);
std::string TransitionsTable(const boost::json::array& transitions);
std::string EventsTable(const boost::json::array& events);
std::string AuditTable(const boost::json::array& entries);
// One event as a line of `events -f`: "2026-12-02T14:46:25.123Z  pod.state  pod_1  message".
std::string EventLine(const boost::json::value& event);
std::string AvailabilityTable(const boost::json::array& gpus);

// "Label:  value" blocks for one entity.
// With `server_url` (http://host:port), a running pod's HTTP ports get browser links (the owner's
// views carry the pod's link token).
std::string PodDetail(const boost::json::value& pod, std::string_view server_url = {});
std::string TemplateDetail(const boost::json::value& spec);
std::string NodeDetail(const boost::json::value& node, const boost::json::array& pods);
std::string UserDetail(const boost::json::value& user);
std::string BalanceDetail(const boost::json::value& balance);

// "[########------------]  40% of 1.9 GiB", or "[...] 312 MiB" while the total is unknown.
std::string PullBar(int64_t current_bytes, int64_t total_bytes);

// How to log into a pod: {"-p", "<host port>", "<user>@<node address>"} for the host port its
// container port `ssh_port` is published on, or "" with what is missing (the pod is not running,
// has no such port, or its node's address is unknown) in `why_not`.
std::vector<std::string> SshArguments(const boost::json::value& pod, std::string_view user,
                                      int ssh_port, std::string& why_not);

}  // namespace suanli::cli
