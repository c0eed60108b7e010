// Request fields: reading the parts of a request that the route files of more than one resource
// share: integers in a query or path, a pod's or template's ports, a workload for the advisor.
//
// Internal to the API. Bad input is never a crash: a parser returns nullopt, a reader records the
// problem in its JsonFields (whose Finish then reports it).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "advisor/model_zoo.h"
#include "advisor/workload.h"
#include "core/domain.h"
#include "server/control_plane.h"
#include "wire/json_fields.h"

namespace suanli::server {

// The API reads every body with the wire module's strict reader.
using wire::JsonFields;
using wire::ParseJsonObject;

// A decimal integer in [min, max], all of `text` (no sign but '-', no spaces); nullopt otherwise.
// The one parser of the API's query values (after, wait_s, max, tail) and ports.
std::optional<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max);

// "ports": a list such as ["8888/http", "22/tcp"]; `*present` says whether the field was there.
std::vector<core::PortSpec> ReadPorts(JsonFields& fields, bool* present);

// "gpu_count": a whole number of GPUs (1 to 64) or a share of one (0.001 to 0.999: 0.5 is half a
// device, gpu_count 1 with gpu_milli 500). Unchanged when absent.
void ReadGpuCount(JsonFields& fields, int* gpu_count, int* gpu_milli);

// "volumes": volumes of their own to mount, [{"name", "mount_path", "read_only"}] (name: the
// volume's name or id; at most wire::kMaxPodVolumes); nullopt when absent.
std::optional<std::vector<VolumeRequest>> ReadVolumeRequests(JsonFields& fields);

// A duration: whole seconds (3600) or text with units ("2h", "30m", "1h30m"), at least 1 s and at
// most 366 days (billing::ParseDurationSeconds). Unchanged when absent.
void ReadDuration(JsonFields& fields, std::string_view key, int64_t* seconds);

// "action" of a monthly budget (notify, stop_interruptible, stop_all), or nullopt when absent; a
// bad one fails `fields`, naming the three.
std::optional<core::BudgetAction> ReadBudgetAction(JsonFields& fields);

// "workload": a model from `zoo` or a Hugging Face config.json, and a task; completed and
// validated. nullopt when absent or wrong (then `fields` says why, in the API's field names).
std::optional<advisor::Workload> ReadWorkload(JsonFields& fields, const advisor::ModelZoo& zoo);

// The advisor's text names the CLI's flags ("give --images or --requests"); an API client has
// fields: this names the workload's fields instead ("give images or requests"). Flags the API has
// no field for stay as they are.
std::string InWorkloadFieldNames(std::string text);

}  // namespace suanli::server
