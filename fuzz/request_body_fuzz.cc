// A request body as the API reads one: parsed as a JSON object (duplicate keys refused), then its
// fields read with the rules the routes use (text, ranges, lists, maps, times, money, ports).
// Whatever the bytes, the answer is a Status naming the field, never a crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/json_fields.h"
#include "wire/views.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace wire = suanli::wire;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  suanli::core::Result<boost::json::object> body = wire::ParseJsonObject(text);
  if (!body.ok()) return 0;
  wire::JsonFields fields(*body);
  std::string name;
  int count = 0;
  int64_t big = 0;
  double share = 0;
  bool flag = false;
  std::optional<int> optional;
  std::vector<std::string> list;
  std::optional<std::vector<std::string>> ports;
  std::map<std::string, std::string> env;
  suanli::core::TimePoint at{};
  suanli::core::Money money;
  fields.String("name", &name, {.max_length = 64});
  fields.Int("gpu_count", &count, {0, 64});
  fields.Int64("seq", &big, {0, INT64_MAX});
  fields.Number("share", &share, {0.0, 1.0});
  fields.Bool("queue", &flag);
  fields.OptionalInt("vcpu", &optional, {1, 1024});
  fields.StringList("command", &list);
  fields.OptionalStringList("ports", &ports);
  fields.StringMap("env", &env);
  fields.Time("at", &at);
  fields.Micros("credits_micros", &money);
  if (ports) {
    for (const std::string& port : *ports) (void)wire::ParsePort(port);
  }
  (void)fields.Finish();
  return 0;
}
