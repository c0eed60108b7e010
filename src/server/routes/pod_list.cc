#include "server/routes/pod_list.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "server/routes/views.h"
#include "wire/views.h"

namespace suanli::server {

namespace json = boost::json;

core::Result<Written<std::string>> PodList::Json(const ControlPlane& plane, const Principal& caller,
                                                 core::TimePoint now) {
  std::string out = R"({"pods":[)";
  bool first = true;
  // Held across VisitPods, which takes the control plane's lock inside it; the control plane never
  // calls back here, so the order is always this lock, then the control plane's.
  core::MutexLock lock(mutex_);
  core::Result<uint64_t> sequence = plane.VisitPods(caller, [&](const PodListEntry& entry) {
    mutex_.AssertHeld();
    const core::Pod& pod = entry.pod;
    auto& [revision, view] = views_[pod.id];
    if (view.empty() || revision != entry.revision) {
      view = json::serialize(wire::PodViewWithoutTime(pod));
      view.pop_back();  // the closing brace: the time-dependent fields follow
      revision = entry.revision;
    }
    json::object context;  // per call and caller, so not in the cached view
    wire::AddPodViewContext(pod, PodViewContextFor(caller, pod, now, entry.node_address), context);
    context["cost_micros"] = entry.cost.micros();
    if (!first) out += ',';
    first = false;
    out += view;
    for (const auto& field : context) {
      out += ',';
      out += json::serialize(json::value(field.key()));
      out += ':';
      out += json::serialize(field.value());
    }
    out += '}';
  });
  if (!sequence.ok()) return sequence.status();
  out += "]}";
  return Written<std::string>{std::move(out), *sequence};
}

}  // namespace suanli::server
