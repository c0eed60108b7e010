// Catalog: the GPU types suanli knows, and how a name a person types finds one.
//
// Names match forgivingly: case, spaces, dashes and the words NVIDIA/GeForce/Tesla/AMD/Instinct do
// not matter ("rtx4090", "RTX 4090", "NVIDIA GeForce RTX 4090"), and a name may leave words out
// ("4090", "h100 sxm") as long as one type fits best. Where several fit equally ("a100"), the
// catalog's preferred_when_ambiguous list decides and the match says so. Prices may be replaced
// (SetPrice) while the catalog is being loaded; after that it is read-only and safe to read from
// any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/gpu_type.h"
#include "core/status.h"

namespace suanli::catalog {

struct GpuMatch {
  const GpuType* gpu = nullptr;  // owned by the Catalog
  // When the name fit several types equally and a preferred one was chosen: all of them, `gpu`
  // included.
  std::vector<const GpuType*> equally_good;

  // "'a100' could be A100 40GB PCIe, ... or A100 80GB SXM; using A100 80GB SXM ...", or "" when the
  // name was not ambiguous. `query` is the name as the person wrote it.
  std::string Note(std::string_view query) const;
};

class Catalog {
 public:
  // `preferred` lists type names, best first, used when a name matches several types equally.
  // INVALID_ARGUMENT when two types share a name or alias, or `preferred` names an unknown type.
  static core::Result<Catalog> Create(std::vector<GpuType> gpus,
                                      std::vector<std::string> preferred);

  std::span<const GpuType> gpus() const { return gpus_; }

  // NOT_FOUND (with "did you mean ...") for an unknown name; INVALID_ARGUMENT for an ambiguous one
  // that no preference settles, listing the choices.
  core::Result<GpuMatch> Find(std::string_view name) const;

  // As Find, but a name that needs a preference to settle is INVALID_ARGUMENT: operator files and
  // other places where a silent choice would surprise later use this.
  core::Result<const GpuType*> FindExact(std::string_view name) const;

  // Replaces the price of `gpu_name` (must be a canonical name). REQUIRES: the type exists.
  void SetPrice(std::string_view gpu_name, Price price);

 private:
  struct NameForm {
    std::vector<std::string> tokens;      // normalized, sorted, unique
    std::vector<std::string> searchable;  // tokens plus model numbers alone: "a6000" adds "6000"
    size_t gpu_index = 0;
  };

  Catalog() = default;
  std::vector<std::string> Suggestions(const std::string& squashed_query) const;

  std::vector<GpuType> gpus_;
  std::vector<size_t> preferred_;                      // indices into gpus_, best first
  std::vector<NameForm> forms_;                        // every name and alias of every type
  std::vector<std::vector<std::string>> name_tokens_;  // of each type's canonical name, sorted
  std::unordered_map<std::string, size_t> by_squashed_name_;  // squashed name or alias -> index
};

// The words of a GPU name as matching sees them: lower case, split on anything but letters and
// digits, vendor words dropped, sizes written one way ("80 GB", "80gb" -> "80g"). Exposed for
// tests.
std::vector<std::string> GpuNameTokens(std::string_view name);

}  // namespace suanli::catalog
