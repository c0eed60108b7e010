// The JSON form of an Advice, as `suanli advise --json` and the API print it (PRODUCT.md's
// contract):
// {"workload": {...}, "estimates": [...], "recommendation": {...}}. Memory in GB (1e9 bytes) per
// GPU; throughput totals over `count` GPUs; rent_usd_per_hour, cost_usd and buy_usd for all `count`
// GPUs.
#pragma once

#include <boost/json/object.hpp>

#include "advisor/advisor.h"

namespace suanli::advisor {

boost::json::object AdviceToJson(const Advice& advice);
boost::json::object EstimateToJson(const Estimate& estimate);
// A zoo entry as GET /v1/models lists it: name, aliases, kind, params (billions).
boost::json::object ModelToJson(const ModelSpec& model);

}  // namespace suanli::advisor
