// The control plane's entities as JSON: the documents the store keeps, and the API's views.
//
// A stored document holds every field (secrets only as hashes); the API view of an entity is its
// document without the hashes. Times are RFC 3339 UTC with milliseconds; money is integer
// micro-dollars in fields whose names end in `_micros`.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/domain.h"
#include "core/ledger_types.h"
#include "core/status.h"

namespace suanli::server {

using core::FormatTime;  // "2026-12-02T14:46:25.123Z"
using core::ParseTime;
core::TimePoint TruncateToMillis(core::TimePoint time);
int64_t UptimeSeconds(const core::Pod& pod, core::TimePoint now);  // 0 unless running

std::string_view RoleName(core::Role role);
std::string_view DesiredStateName(core::DesiredState desired);
std::string_view LedgerKindName(core::LedgerKind kind);

boost::json::object ToJson(const core::User& user);
boost::json::object ToJson(const core::ApiToken& token);
boost::json::object ToJson(const core::SshKey& key);
boost::json::object ToJson(const core::Template& spec);
boost::json::object ToJson(const core::Pod& pod);
boost::json::object ToJson(const core::Node& node);  // without gpu_health, which is not stored
// The heartbeat's and the node view's form (figures a GPU does not report are left out).
boost::json::object ToJson(const core::GpuHealth& health);
boost::json::object ToJson(const core::JoinToken& token);
boost::json::object ToJson(const core::Transition& transition);
boost::json::object ToJson(const core::LedgerEntry& entry);
boost::json::array PortsToJson(const std::vector<core::PortSpec>& ports);

// A pod as the API shows it, without the fields that change with time alone (`cost_micros` with
// what has accrued, `uptime_s`), which callers add: it adds `actions` and storage prices.
boost::json::object PodViewWithoutTime(const core::Pod& pod);

// Documents the server wrote itself; a field that is missing keeps its default.
core::Result<core::User> UserFromJson(const boost::json::object& json);
core::Result<core::ApiToken> ApiTokenFromJson(const boost::json::object& json);
core::Result<core::SshKey> SshKeyFromJson(const boost::json::object& json);
core::Result<core::Template> TemplateFromJson(const boost::json::object& json);
core::Result<core::Pod> PodFromJson(const boost::json::object& json);
core::Result<core::Node> NodeFromJson(const boost::json::object& json);
core::Result<core::JoinToken> JoinTokenFromJson(const boost::json::object& json);

// "22/tcp", "8888/http" <-> PortSpec. INVALID_ARGUMENT names the accepted forms.
core::Result<core::PortSpec> ParsePort(std::string_view text);
std::string PortText(const core::PortSpec& port);

}  // namespace suanli::server
