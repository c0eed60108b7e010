// Text people write and suanli reads: an operator's GPU and price files (YAML), the model zoo's
// format (YAML), a Hugging Face config.json given to the advisor, and `suanli apply -f` specs
// (YAML documents). The first byte picks the reader. Each must answer a Status naming the line or
// field, never crash (yaml-cpp throws on malformed YAML: the readers catch it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "advisor/hf_config.h"
#include "advisor/model_zoo.h"
#include "catalog/catalog_file.h"
#include "cli/apply_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace catalog = suanli::catalog;
  switch (data[0] % 5) {
    case 0:
      (void)catalog::LoadCatalog({"gpus.yaml", text},
                                 {"prices.yaml", catalog::BuiltInPricesYaml()});
      break;
    case 1: {
      const catalog::DataFile override_prices{"prices.yaml", text};
      (void)catalog::LoadBuiltInCatalog(&override_prices);
      break;
    }
    case 2:
      (void)suanli::advisor::ModelZoo::Parse({"models.yaml", text});
      break;
    case 3:
      (void)suanli::advisor::ModelFromHfConfig(text, "config.json");
      break;
    default:
      (void)suanli::cli::ParseObjectSpecs(text, "spec.yaml");
      break;
  }
  return 0;
}
