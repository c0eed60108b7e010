#include "server/routes/pod_list.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "server/routes/views.h"
#include "wire/views.h"

namespace suanli::server {

namespace json = boost::json;

core::Result<Written<std::string>> PodList::Json(const ControlPlane& plane, const Principal& caller,
                                                 core::TimePoint now, const PodPage& page,
                                                 View view) {
  std::string out = R"({"pods":[)";
  bool first = true;
  // Held across VisitPods, which takes the control plane's lock inside it; the control plane never
  // calls back here, so the order is always this lock, then the control plane's.
  core::MutexLock lock(mutex_);
  Cache& cache = view == View::kFull ? full_ : compact_;
  core::Result<PodPageEnd> end = plane.VisitPods(caller, page, [&](const PodListEntry& entry) {
    mutex_.AssertHeld();
    const core::Pod& pod = entry.pod;
    auto& [revision, text] = cache[pod.id];
    if (text.empty() || revision != entry.revision) {
      text = json::serialize(view == View::kFull ? wire::PodViewWithoutTime(pod)
                                                 : wire::PodListViewWithoutTime(pod));
      text.pop_back();  // the closing brace: the time-dependent fields follow
      revision = entry.revision;
    }
    json::object context;  // per call and caller, so not in the cached view
    if (view == View::kFull) {
      wire::AddPodViewContext(pod, PodViewContextFor(caller, pod, now, entry.node_address),
                              context);
    } else {
      context["uptime_s"] = wire::UptimeSeconds(pod, now);
    }
    context["cost_micros"] = entry.cost.micros();
    if (!first) out += ',';
    first = false;
    out += text;
    // The context's members after the cached ones: its text without the braces (one serializer
    // run per pod rather than two per field: those were a tenth of a page's time).
    const std::string fields = json::serialize(context);
    out += ',';
    out.append(fields, 1, fields.size() - 1);
  });
  if (!end.ok()) return end.status();
  out += ']';
  if (!end->next_after.empty()) {
    out += R"(,"next_after":)" + json::serialize(json::value(end->next_after));
  }
  out += '}';
  return Written<std::string>{std::move(out), end->sequence};
}

}  // namespace suanli::server
