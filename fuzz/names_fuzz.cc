// Names and header values a person or a pod controls: a GPU or model name matched against the
// catalog and the zoo ("4090", "a100 80gb"), the advisor's enumerations, pod ports ("8888/http"),
// and the cookie and query rewriting of the pod proxy (Cookie, Set-Cookie, a link parameter).
// The first byte picks; each must answer, never crash, and a confined Set-Cookie must stay inside
// its pod's path.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "advisor/model_zoo.h"
#include "advisor/workload.h"
#include "catalog/catalog_file.h"
#include "net/http.h"
#include "net/proxy_headers.h"
#include "wire/views.h"

namespace {

const suanli::catalog::Catalog& BuiltInCatalog() {
  static const suanli::catalog::Catalog catalog = *suanli::catalog::LoadBuiltInCatalog();
  return catalog;
}

const suanli::advisor::ModelZoo& BuiltInZoo() {
  static const suanli::advisor::ModelZoo zoo = *suanli::advisor::LoadBuiltInModelZoo();
  return zoo;
}

// Whatever it was given, a confined cookie has no Domain and no Path outside the pod's prefix.
void CheckConfined(std::string_view cookie, std::string_view prefix) {
  size_t semicolon = cookie.find(';');
  while (semicolon != std::string_view::npos) {
    cookie.remove_prefix(semicolon + 1);
    semicolon = cookie.find(';');
    std::string_view attribute = cookie.substr(0, semicolon);
    while (!attribute.empty() && (attribute.front() == ' ' || attribute.front() == '\t')) {
      attribute.remove_prefix(1);
    }
    const size_t equals = attribute.find('=');
    std::string key = suanli::net::LowerAscii(attribute.substr(0, equals));
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string_view value =
        equals == std::string_view::npos ? std::string_view() : attribute.substr(equals + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (key == "domain") std::abort();
    if (key == "path" && !value.starts_with(prefix) &&
        value != prefix.substr(0, prefix.size() - 1)) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace net = suanli::net;
  switch (data[0] % 6) {
    case 0:
      (void)BuiltInCatalog().Find(text);
      (void)BuiltInCatalog().FindExact(text);
      break;
    case 1:
      (void)BuiltInZoo().Find(text);
      (void)suanli::advisor::ParseTask(text);
      (void)suanli::advisor::ParsePrecision(text);
      (void)suanli::advisor::ParseEngine(text);
      break;
    case 2:
      (void)suanli::wire::ParsePort(text);
      break;
    case 3:
      (void)net::CookieValue(text, "suanli_link");
      (void)net::WithoutCookie(text, "suanli_link");
      break;
    case 4: {
      constexpr std::string_view kPrefix = "/v1/pods/pod_b/proxy/";
      const std::optional<std::string> confined =
          net::ConfinedSetCookie(text, kPrefix, {"suanli_link"});
      if (confined) CheckConfined(*confined, kPrefix);
      break;
    }
    default:
      (void)net::WithoutQueryParameter(text, "suanli_link");
      break;
  }
  return 0;
}
