#include "catalog/catalog.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "core/suggest.h"

namespace suanli::catalog {
namespace {

bool IsVendorWord(std::string_view word) {
  for (std::string_view vendor : {"nvidia", "geforce", "tesla", "amd", "instinct", "radeon"}) {
    if (word == vendor) return true;
  }
  return false;
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Squash(const std::vector<std::string>& tokens) {
  std::string squashed;
  for (const std::string& token : tokens) squashed += token;
  return squashed;
}

std::vector<std::string> SortedUnique(std::vector<std::string> tokens) {
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

std::string AmbiguityText(std::string_view query, const std::vector<const GpuType*>& choices) {
  std::vector<std::string> names;
  for (const GpuType* gpu : choices) names.push_back(gpu->name);
  return "'" + std::string(query) + "' could be " + core::JoinChoices(names, " or ");
}

}  // namespace

std::vector<std::string> GpuNameTokens(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && !IsVendorWord(word)) words.push_back(word);
    word.clear();
  };
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      word += c;
    } else {
      flush();
    }
  }
  flush();

  // Sizes are written many ways: "80GB", "80 GB", "80g", "80 G".
  std::vector<std::string> tokens;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view current = words[i];
    if (AllDigits(current) && i + 1 < words.size() &&
        (words[i + 1] == "gb" || words[i + 1] == "g")) {
      tokens.push_back(std::string(current) + "g");
      ++i;
    } else if (current.size() > 2 && current.ends_with("gb") &&
               AllDigits(current.substr(0, current.size() - 2))) {
      tokens.push_back(std::string(current.substr(0, current.size() - 1)));
    } else if (const size_t letters = current.find_first_not_of("0123456789");
               letters > 0 && letters != std::string_view::npos && current.size() - letters >= 2 &&
               current.substr(letters).find_first_of("0123456789") == std::string_view::npos) {
      // A model number fused with its suffix: "3090ti" is "3090 ti".
      tokens.emplace_back(current.substr(0, letters));
      tokens.emplace_back(current.substr(letters));
    } else {
      tokens.emplace_back(current);
    }
  }
  return tokens;
}

core::Result<Catalog> Catalog::Create(std::vector<GpuType> gpus,
                                      std::vector<std::string> preferred) {
  Catalog catalog;
  catalog.gpus_ = std::move(gpus);
  for (size_t index = 0; index < catalog.gpus_.size(); ++index) {
    const GpuType& gpu = catalog.gpus_[index];
    std::vector<std::string_view> names = {gpu.name};
    names.insert(names.end(), gpu.aliases.begin(), gpu.aliases.end());
    catalog.name_tokens_.push_back(SortedUnique(GpuNameTokens(gpu.name)));
    for (std::string_view name : names) {
      std::vector<std::string> tokens = GpuNameTokens(name);
      if (tokens.empty()) {
        return core::InvalidArgumentError("GPU '" + gpu.name +
                                          "' has a name or alias with no letters or digits");
      }
      auto [it, inserted] = catalog.by_squashed_name_.emplace(Squash(tokens), index);
      if (!inserted && it->second != index) {
        return core::InvalidArgumentError("'" + std::string(name) + "' names both " +
                                          catalog.gpus_[it->second].name + " and " + gpu.name +
                                          "; give each GPU type its own names");
      }
      std::vector<std::string> searchable = tokens;
      for (const std::string& token : tokens) {
        // "6000" may mean the RTX A6000 as much as the RTX 6000 Ada, so it must find both.
        const size_t digits = token.find_first_of("0123456789");
        if (digits > 0 && digits != std::string::npos && token.size() - digits >= 3 &&
            AllDigits(std::string_view(token).substr(digits))) {
          searchable.push_back(token.substr(digits));
        }
      }
      catalog.forms_.push_back(
          {SortedUnique(std::move(tokens)), SortedUnique(std::move(searchable)), index});
    }
  }
  for (const std::string& name : preferred) {
    auto it = catalog.by_squashed_name_.find(Squash(GpuNameTokens(name)));
    if (it == catalog.by_squashed_name_.end()) {
      return core::InvalidArgumentError("preferred_when_ambiguous names '" + name +
                                        "', which is not a GPU type of the catalog");
    }
    catalog.preferred_.push_back(it->second);
  }
  return catalog;
}

core::Result<GpuMatch> Catalog::Find(std::string_view name) const {
  const std::vector<std::string> query_tokens = GpuNameTokens(name);
  const std::string query(name);
  if (query_tokens.empty()) {
    return core::InvalidArgumentError("'" + query +
                                      "' is not a GPU name; try e.g. 'RTX 4090' or 'a100-80g'");
  }
  const std::string squashed = Squash(query_tokens);
  if (auto exact = by_squashed_name_.find(squashed); exact != by_squashed_name_.end()) {
    return GpuMatch{&gpus_[exact->second], {}};
  }

  // Every type one of whose names holds all the query's words. Among them, the fewer words of its
  // canonical name the query leaves out, the better: "3090" is the RTX 3090 rather than the 3090
  // Ti, while "6000" fits the RTX A6000 and the RTX 6000 Ada equally (aliases do not count here, or
  // the short alias "A6000" would decide).
  const std::vector<std::string> wanted = SortedUnique(query_tokens);
  std::vector<size_t> extra_words(gpus_.size(), std::numeric_limits<size_t>::max());
  for (const NameForm& form : forms_) {
    if (!std::includes(form.searchable.begin(), form.searchable.end(), wanted.begin(),
                       wanted.end()))
      continue;
    const std::vector<std::string>& canonical = name_tokens_[form.gpu_index];
    const auto said =
        std::count_if(canonical.begin(), canonical.end(), [&](const std::string& word) {
          return std::binary_search(wanted.begin(), wanted.end(), word);
        });
    extra_words[form.gpu_index] = canonical.size() - static_cast<size_t>(said);
  }
  const size_t fewest = *std::min_element(extra_words.begin(), extra_words.end());
  if (fewest == std::numeric_limits<size_t>::max()) {
    std::vector<std::string> suggestions = Suggestions(squashed);
    std::string message = "no GPU type named '" + query + "'";
    if (!suggestions.empty())
      message += "; did you mean " + core::JoinChoices(suggestions, " or ") + "?";
    return core::NotFoundError(message + " ('suanli gpus' lists them all)");
  }
  std::vector<size_t> best;
  for (size_t index = 0; index < gpus_.size(); ++index) {
    if (extra_words[index] == fewest) best.push_back(index);
  }
  if (best.size() == 1) return GpuMatch{&gpus_[best.front()], {}};

  GpuMatch match;
  for (size_t index : best) match.equally_good.push_back(&gpus_[index]);
  for (size_t index : preferred_) {
    if (std::find(best.begin(), best.end(), index) != best.end()) {
      match.gpu = &gpus_[index];
      return match;
    }
  }
  return core::InvalidArgumentError(AmbiguityText(query, match.equally_good) + "; say which");
}

core::Result<const GpuType*> Catalog::FindExact(std::string_view name) const {
  core::Result<GpuMatch> match = Find(name);
  if (!match.ok()) return match.status();
  if (!match->equally_good.empty()) {
    return core::InvalidArgumentError(AmbiguityText(name, match->equally_good) + "; say which");
  }
  return match->gpu;
}

std::string GpuMatch::Note(std::string_view query) const {
  if (equally_good.empty()) return "";
  return AmbiguityText(query, equally_good) + "; using " + gpu->name +
         " (say the full name for another)";
}

void Catalog::SetPrice(std::string_view gpu_name, Price price) {
  for (GpuType& gpu : gpus_) {
    if (gpu.name == gpu_name) {
      gpu.price = std::move(price);
      return;
    }
  }
  SUANLI_CHECK(false, "SetPrice on a GPU type the catalog does not have: " + std::string(gpu_name));
}

std::vector<std::string> Catalog::Suggestions(const std::string& squashed_query) const {
  std::vector<std::pair<std::string_view, size_t>> keys(by_squashed_name_.begin(),
                                                        by_squashed_name_.end());
  // Model numbers alone too ("4090" of the RTX 4090), so that "4900" is a typo of one of them.
  for (const NameForm& form : forms_) {
    for (const std::string& token : form.searchable) {
      if (token.size() >= 3 && AllDigits(token)) keys.emplace_back(token, form.gpu_index);
    }
  }
  std::vector<std::string> names;
  for (size_t index : core::ClosestMatches(squashed_query, keys, gpus_.size())) {
    names.push_back(gpus_[index].name);
  }
  return names;
}

}  // namespace suanli::catalog
