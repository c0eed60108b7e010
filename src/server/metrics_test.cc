#include "server/metrics.h"

#include <gtest/gtest.h>

#include "core/pod_state.h"

namespace suanli::server {
namespace {

// Every pod state, job status and worker state has its line, at 0 where none is: a series that
// vanishes when its count drops to 0 reads as "no data" on a dashboard, not as 0.
TEST(MetricsTest, EveryStateAndStatusHasALineEvenAtZero) {
  Gauges gauges;
  gauges.pods_by_state = {{"running", 3}};
  gauges.unreadable_records = 2;
  gauges.store_transactions = 7;
  Gauges::Endpoint endpoint;
  endpoint.id = "ep_1";
  endpoint.jobs_by_status = {{"IN_QUEUE", 4}};
  endpoint.workers_by_state = {{"idle", 1}};
  gauges.endpoints.push_back(endpoint);
  const std::string text = RenderGauges(gauges);
  for (const char* line :
       {"suanli_pods{state=\"running\"} 3\n", "suanli_pods{state=\"pending\"} 0\n",
        "suanli_pods{state=\"terminated\"} 0\n",
        "suanli_endpoint_jobs{endpoint=\"ep_1\",status=\"IN_QUEUE\"} 4\n",
        "suanli_endpoint_jobs{endpoint=\"ep_1\",status=\"TIMED_OUT\"} 0\n",
        "suanli_endpoint_workers{endpoint=\"ep_1\",state=\"idle\"} 1\n",
        "suanli_endpoint_workers{endpoint=\"ep_1\",state=\"stopping\"} 0\n",
        "suanli_store_unreadable_records 2\n", "suanli_store_transactions_total 7\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " missing from:\n" << text;
  }
  size_t pod_lines = 0;
  for (size_t at = text.find("\nsuanli_pods{"); at != std::string::npos;
       at = text.find("\nsuanli_pods{", at + 1)) {
    ++pod_lines;
  }
  EXPECT_EQ(pod_lines, std::size(core::kPodStates));
}

}  // namespace
}  // namespace suanli::server
