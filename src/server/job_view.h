// A serverless job's status as RunPod's API shows it (GET /v2/{endpoint}/status/{job}, runsync,
// and the body of a job's webhook): {"id", "status", "delayTime", "executionTime"} in
// milliseconds, with "output", "error", "workerId" and "retries" when they apply.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>

#include "core/clock.h"
#include "serverless/job.h"

namespace suanli::server {

boost::json::object JobStatusView(const serverless::Job& job, core::TimePoint now);

// Stored JSON text as a value (the store keeps a job's input and output as text); text that is
// not JSON as a string.
boost::json::value ParsedOrText(const std::string& text);

}  // namespace suanli::server
