#include "server/job_view.h"

#include <boost/json/parse.hpp>

namespace suanli::server {

namespace json = boost::json;

json::value ParsedOrText(const std::string& text) {
  boost::system::error_code error;
  json::value value = json::parse(text, error);
  if (error) return json::value(text);
  return value;
}

json::object JobStatusView(const serverless::Job& job, core::TimePoint now) {
  json::object view{{"id", job.id},
                    {"status", serverless::JobStatusName(job.status)},
                    {"delayTime", serverless::DelayMillis(job, now)},
                    {"executionTime", serverless::ExecutionMillis(job, now)}};
  if (!job.output.empty()) view["output"] = ParsedOrText(job.output);
  if (!job.error.empty()) view["error"] = job.error;
  if (!job.worker_id.empty()) view["workerId"] = job.worker_id;
  if (job.retries > 0) view["retries"] = job.retries;
  return view;
}

}  // namespace suanli::server
