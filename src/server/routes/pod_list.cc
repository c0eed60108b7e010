#include "server/routes/pod_list.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include "server/routes/views.h"
#include "wire/views.h"

namespace suanli::server {

namespace json = boost::json;

namespace {

// What one pod adds to a page beyond its cached view, copied out while the control plane's lock
// is held so that the page is written after it is released.
struct Row {
  std::shared_ptr<const PodList::CachedView> view;
  bool jupyter_token;
  bool link_token;
  std::string node_address;
  int64_t cost_micros;
  int64_t uptime_s;
};

template <typename T>
void AppendBytes(std::string& key, const T& value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key.append(bytes, sizeof(T));
}

// The tag of a page: a hash of everything that goes into its text besides the cached views
// (named by their pod and revision), so two pages with the same tag have the same bytes.
std::string PageTag(uint64_t nonce, PodList::View view, const std::vector<Row>& rows,
                    const std::string& next_after) {
  std::string key;
  key.reserve(64 + rows.size() * 64);
  key += view == PodList::View::kFull ? 'f' : 'c';
  for (const Row& row : rows) {
    key += row.view->id;
    key += '\0';
    AppendBytes(key, row.view->revision);
    AppendBytes(key, row.cost_micros);
    AppendBytes(key, row.uptime_s);
    key += row.jupyter_token ? (row.link_token ? '3' : '1') : (row.link_token ? '2' : '0');
    key += row.node_address;
    key += '\0';
  }
  key += next_after;
  return EntityTag(nonce ^ std::hash<std::string_view>()(key));
}

// `,"NAME":"VALUE"` with VALUE escaped as JSON.
std::string Member(std::string_view name, std::string_view value) {
  return fmt::format(",\"{}\":{}", name, json::serialize(json::value(value)));
}

// Appends `,"NAME":"VALUE"` to `out`; VALUE is copied as it is when it needs no escaping (a node's
// address always), as Member would write it, without Member's two allocations per pod.
void AppendMember(std::string& out, std::string_view name, std::string_view value) {
  const bool plain = std::none_of(value.begin(), value.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
           static_cast<unsigned char>(c) >= 0x7f;
  });
  if (!plain) {
    out += Member(name, value);
    return;
  }
  out += ",\"";
  out += name;
  out += "\":\"";
  out += value;
  out += '"';
}

}  // namespace

PodList::PodList(uint64_t process_nonce) : process_nonce_(process_nonce) {}

core::Result<Written<TaggedJson>> PodList::Json(const ControlPlane& plane, const Principal& caller,
                                                core::TimePoint now, const PodPage& page, View view,
                                                const std::optional<std::string>& if_none_match) {
  std::vector<Row> rows;
  rows.reserve(std::min<size_t>(page.limit, 64));
  core::Result<PodPageEnd> end = [&]() -> core::Result<PodPageEnd> {
    // Held across VisitPods, which takes the control plane's lock inside it; the control plane
    // never calls back here, so the order is always this lock, then the control plane's.
    core::MutexLock lock(mutex_);
    Cache& cache = view == View::kFull ? full_ : compact_;
    return plane.VisitPods(caller, page, [&](const PodListEntry& entry) {
      mutex_.AssertHeld();
      const core::Pod& pod = entry.pod;
      std::shared_ptr<const CachedView>& cached = cache[pod.id];
      if (cached == nullptr || cached->revision != entry.revision) {
        auto made = std::make_shared<CachedView>();
        made->id = pod.id;
        made->revision = entry.revision;
        made->text = json::serialize(view == View::kFull ? wire::PodViewWithoutTime(pod)
                                                         : wire::PodListViewWithoutTime(pod));
        made->text.pop_back();  // the closing brace: the time-dependent fields follow
        if (view == View::kFull) {
          made->jupyter_token = Member("jupyter_token", pod.jupyter_token);
          made->link_token = Member("link_token", pod.link_token);
        }
        cached = std::move(made);
      }
      // Which secrets this caller sees: the rule GET /v1/pods/ID follows.
      const wire::PodViewContext context = PodViewContextFor(caller, pod, now, {});
      rows.push_back({.view = cached,
                      .jupyter_token = view == View::kFull && context.with_jupyter_token,
                      .link_token = view == View::kFull && context.with_link_token,
                      .node_address = view == View::kFull ? entry.node_address : std::string(),
                      .cost_micros = entry.cost.micros(),
                      .uptime_s = wire::UptimeSeconds(pod, now)});
    });
  }();
  if (!end.ok()) return end.status();
  TaggedJson answer{.json = {}, .etag = PageTag(process_nonce_, view, rows, end->next_after)};
  if (NamesEntityTag(if_none_match, answer.etag)) {
    return Written<TaggedJson>{std::move(answer), end->sequence};
  }

  std::string& out = answer.json;
  // Enough for the whole page, so that it is written without growing (a regrowth copies all that
  // came before: a tenth of a 20-pod page's time).
  size_t size = 64 + end->next_after.size() * 2;
  for (const Row& row : rows) {
    size += row.view->text.size() + row.view->jupyter_token.size() + row.view->link_token.size() +
            row.node_address.size() * 6 + 96;
  }
  out.reserve(size);
  out = R"({"pods":[)";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    if (i > 0) out += ',';
    out += row.view->text;
    // The per-call fields, in the order GET /v1/pods/ID writes them.
    if (view == View::kFull) {
      if (row.jupyter_token) out += row.view->jupyter_token;
      if (row.link_token) out += row.view->link_token;
      AppendMember(out, "node_address", row.node_address);
      fmt::format_to(std::back_inserter(out), FMT_COMPILE(R"(,"cost_micros":{},"uptime_s":{}}})"),
                     row.cost_micros, row.uptime_s);
    } else {
      fmt::format_to(std::back_inserter(out), FMT_COMPILE(R"(,"uptime_s":{},"cost_micros":{}}})"),
                     row.uptime_s, row.cost_micros);
    }
  }
  out += ']';
  if (!end->next_after.empty()) {
    out += R"(,"next_after":)" + json::serialize(json::value(end->next_after));
  }
  out += '}';
  return Written<TaggedJson>{std::move(answer), end->sequence};
}

}  // namespace suanli::server
