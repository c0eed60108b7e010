// How far the advisor's speed (and so its time and cost) may be off, by kind of workload: the
// median absolute percentage error of its predictions on published measurements from sources it
// was not fitted on (bench/advisor_accuracy --leave-one-source-out, docs/advisor.md). That is the
// figure for a user who brings their own software. The table is checked against the bench's own
// output by a ctest (advisor_error_bands), so it cannot drift from the model.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "advisor/workload.h"

namespace suanli::advisor {

struct SpeedError {
  std::string_view kind;  // the calibration rows' workload_kind: "llm_decode", "train_cnn", ...
  double median_percent;  // leave-one-source-out MdAPE of that kind
  int rows;               // the measurements it rests on
};

// Every kind with measurements, as the latest leave-one-source-out run scored it.
std::span<const SpeedError> SpeedErrors();

// The band for `workload`'s speed; nullopt for kinds no measurement covers (say so, not a guess).
std::optional<SpeedError> SpeedErrorOf(const Workload& workload);

}  // namespace suanli::advisor
