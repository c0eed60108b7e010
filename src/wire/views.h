// The API's views of the control plane's entities: the JSON that clients (the CLI, the console,
// scripts) and agents read. A contract of its own, apart from the store's documents
// (server/documents.h), so that a stored field can be renamed or migrated without breaking them.
//
// Secrets never appear (token hashes, node credentials); a pod's own secrets only for the viewers
// PodViewContext names. Times are RFC 3339 UTC with milliseconds; money is integer micro-dollars in
// fields whose names end in `_micros`.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/domain.h"
#include "core/event.h"
#include "core/ledger_types.h"
#include "core/status.h"

namespace suanli::wire {

std::string_view RoleName(core::Role role);
std::string_view DesiredStateName(core::DesiredState desired);
core::DesiredState ParseDesiredState(std::string_view name);  // unknown names: kRunning
std::string_view LedgerKindName(core::LedgerKind kind);
// "notify", "stop_interruptible", "stop_all" <-> BudgetAction; nullopt for another name.
std::string_view BudgetActionName(core::BudgetAction action);
std::optional<core::BudgetAction> ParseBudgetAction(std::string_view name);

// "22/tcp", "8888/http" <-> PortSpec. INVALID_ARGUMENT names the accepted forms.
core::Result<core::PortSpec> ParsePort(std::string_view text);
std::string PortText(const core::PortSpec& port);
boost::json::array PortsView(const std::vector<core::PortSpec>& ports);

boost::json::object UserView(const core::User& user);
boost::json::object ApiTokenView(const core::ApiToken& token);  // without the secret's hash
boost::json::object SshKeyView(const core::SshKey& key);
boost::json::object TemplateView(const core::Template& spec);
boost::json::object JoinTokenView(const core::JoinToken& token);  // without the secret's hash
// Figures a GPU does not report (negative in core::GpuHealth) are left out.
boost::json::object GpuHealthView(const core::GpuHealth& health);
// {"index", "memory_bandwidth_gbps", "fp16_tflops"[, "bf16_tflops"][, "fp8_tflops"]}.
boost::json::object GpuMeasurementView(const core::GpuMeasurement& measurement);
boost::json::object NodeView(const core::Node& node);  // without its credential's hash
boost::json::object TransitionView(const core::Transition& transition);
boost::json::object LedgerEntryView(const core::LedgerEntry& entry);
// {"id", "time", "kind", "object_id", "user_id", "message", "detail": {...}}.
boost::json::object EventView(const core::Event& event);
// {"id", "time", "user_id", "token_id", "action", "object_id", "status", "error_code"}.
boost::json::object AuditEntryView(const core::AuditEntry& entry);

// A pod as the API shows it, without what depends on the viewer or on the time: no secrets, no
// `cost_micros`, `uptime_s` or `node_address`. With `actions` and the storage prices. What a list
// can cache per pod revision.
boost::json::object PodViewWithoutTime(const core::Pod& pod);
// A pod's or an endpoint's volumes of their own: [{"volume_id", "mount_path", "read_only"}].
boost::json::array VolumeMountsView(const std::vector<core::VolumeMount>& mounts);
// The fields a list of pods shows (GET /v1/pods?view=compact), likewise without the time: id,
// owner, name, template, image, GPU, state and its reason, readiness, node, prices, creation and
// actions. Callers add `cost_micros` and `uptime_s`.
boost::json::object PodListViewWithoutTime(const core::Pod& pod);

struct PodViewContext {
  core::TimePoint now{};            // for uptime_s
  std::string node_address{};       // where renters reach its published ports ("" while unplaced)
  bool with_jupyter_token = false;  // its owner, and its node's agent (to hand to the container)
  bool with_link_token = false;     // its owner only
};
// PodViewWithoutTime plus `cost_micros` (pod.cost as given: callers add what has accrued),
// `uptime_s`, `node_address` and the secrets the context allows.
boost::json::object PodView(const core::Pod& pod, const PodViewContext& context);
// Adds to `view` (a PodViewWithoutTime) what PodView adds.
void AddPodViewContext(const core::Pod& pod, const PodViewContext& context,
                       boost::json::object& view);

int64_t UptimeSeconds(const core::Pod& pod, core::TimePoint now);  // 0 unless running

// What a volume's view shows beside the volume: the pods that use it (not terminated), whether one
// of them has it read-write, its home node's name, and its cost with what has accrued since its
// last charge.
struct VolumeUse {
  std::vector<std::string> pod_ids;
  bool read_write = false;
  std::string home_node_name;
  core::Money cost;
};
// "available", "moving", "restoring"
std::string_view VolumeStateName(core::VolumeState state);
boost::json::object VolumeView(const core::Volume& volume, const VolumeUse& use);

std::string_view SnapshotStateName(core::SnapshotState state);  // "creating", "ready", "failed"
// `snapshot` with its cost as given (the control plane adds what accrued since its last charge).
boost::json::object SnapshotView(const core::Snapshot& snapshot);

}  // namespace suanli::wire
