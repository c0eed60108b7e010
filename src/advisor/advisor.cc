#include "advisor/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace suanli::advisor {
namespace {

bool Qualifies(const Estimate& e, const AdviseOptions& options) {
  if (!e.supported || !e.fits) return false;
  if (!std::isfinite(e.time_s) || e.time_s <= 0) return false;  // no finite answer: never the pick
  if (options.deadline_s && e.time_s > *options.deadline_s) return false;
  if (options.budget && e.cost > *options.budget) return false;
  return true;
}

// Best first: qualifying estimates by cost then time (those that would train BF16 in FP16 after the
// others); then those that fit but miss the deadline or budget; then those that do not fit;
// unsupported ones last.
int Tier(const Estimate& e, const AdviseOptions& options) {
  if (Qualifies(e, options)) return e.bf16_training_in_fp16 ? 1 : 0;
  if (e.supported && e.fits) return 2;
  if (e.supported) return 3;
  return 4;
}

std::string Gb(double bytes) { return fmt::format("{:.1f} GB", bytes / catalog::kBytesPerGb); }

// Where what NVML reports differs from the label (HBM and ECC cards: an H200 "141 GB" holds 140.4),
// the label too, so the figure does not read as a typo; "" otherwise.
std::string LabelText(const catalog::GpuType& gpu) {
  const double usable = gpu.MemoryBytes() / catalog::kBytesPerGb;
  if (std::fabs(usable - gpu.memory_gb) < 0.05) return "";
  return fmt::format(" (sold as {:g} GB; NVML reports {:.1f})", gpu.memory_gb, usable);
}

// What decides the speed: bandwidth when memory-bound, the precision's tensor rate when
// compute-bound.
std::string DecidingFigure(const Estimate& e, const Workload& w) {
  if (e.bound == Bound::kMemory) return fmt::format("{:.0f} GB/s", e.gpu->bandwidth_gbs);
  double tflops = e.gpu->Tensor16Tflops();
  std::string precision = "16-bit";
  if (w.precision == Precision::kFp8 && e.gpu->fp8_tflops) {
    tflops = *e.gpu->fp8_tflops;
    precision = "FP8";
  } else if (w.precision == Precision::kInt8 && e.gpu->int8_tops) {
    tflops = *e.gpu->int8_tops;
    precision = "INT8";
  } else if (w.precision == Precision::kFp32) {
    tflops = e.gpu->fp32_tflops;
    precision = "FP32";
  }
  return fmt::format("{:.0f} {} TFLOPS", tflops, precision);
}

std::string PhaseName(const Workload& w) {
  if (IsTraining(w.task)) return "training";
  if (w.model.kind == ModelKind::kDiffusion) return "denoising";
  if (w.model.kind == ModelKind::kDecoderLm || w.model.kind == ModelKind::kEncoderDecoder) {
    return w.task == Task::kServe ? "serving" : "decoding";
  }
  return "inference";
}

std::string ExplainPick(const Advice& advice, const AdviseOptions& options) {
  const Estimate& pick = advice.estimates.front();
  const Workload& w = advice.workload;
  std::string reason;
  const double spare = pick.memory_capacity - pick.memory.Total();
  if (pick.count == 1) {
    reason = fmt::format("{} needs {} and fits in the {}'s {}{} with {} to spare", w.model.name,
                         Gb(pick.memory.Total()), pick.gpu->name, Gb(pick.memory_capacity),
                         LabelText(*pick.gpu), Gb(spare));
  } else {
    reason = fmt::format("{} needs {} GPUs ({} of each {}{})", w.model.name, pick.count,
                         Gb(pick.memory.Total()), Gb(pick.memory_capacity), LabelText(*pick.gpu));
  }
  reason += fmt::format("; {} is {}-bound, so the {}'s {} give {}", PhaseName(w),
                        pick.bound == Bound::kMemory ? "bandwidth" : "compute", pick.gpu->name,
                        DecidingFigure(pick, w), RateText(pick));

  const Estimate* runner_up = nullptr;
  for (size_t i = 1; i < advice.estimates.size(); ++i) {
    const Estimate& other = advice.estimates[i];
    if (Qualifies(other, options) && other.gpu != pick.gpu) {
      runner_up = &other;
      break;
    }
  }
  if (runner_up != nullptr && PrimaryRate(*runner_up) > 0 &&
      runner_up->rent_per_hour.micros() > 0) {
    reason += fmt::format(", {:.2f}x the {} at {:.2f}x its price per hour",
                          PrimaryRate(pick) / PrimaryRate(*runner_up), GpusText(*runner_up),
                          pick.rent_per_hour.ToDollars() / runner_up->rent_per_hour.ToDollars());
  }
  reason += fmt::format(". The job takes {} and costs {} to rent", DurationText(pick.time_s),
                        pick.cost.ToRoundedString());
  if (pick.break_even_hours) {
    reason += fmt::format(
        "; buying costs {} and pays off after {:.0f} hours of use ({:.0f} days around the clock)",
        pick.buy.ToString(), *pick.break_even_hours, *pick.break_even_hours / 24);
  }
  return reason + ".";
}

std::string ExplainNothing(const Advice& advice, const AdviseOptions& options) {
  bool any_fits = false;
  for (const Estimate& e : advice.estimates) any_fits |= e.supported && e.fits;
  if (!any_fits) {
    int most = 0;
    for (const Estimate& e : advice.estimates) most = std::max(most, e.count);
    return fmt::format(
        "{} does not fit on {} {} of any GPU considered; try --quant, a smaller --batch or --seq, "
        "or --task lora/qlora",
        advice.workload.model.name, most == 1 ? "one" : fmt::format("up to {}", most),
        most == 1 ? "card" : "cards");
  }
  std::string limits;
  if (options.deadline_s)
    limits += fmt::format("the deadline of {}", DurationText(*options.deadline_s));
  if (options.budget)
    limits += (limits.empty() ? "" : " and ") +
              fmt::format("the budget of {}", options.budget->ToString());
  const Estimate& closest = advice.estimates.front();
  return fmt::format("no GPU that fits meets {}; the closest is {} ({}, {})", limits,
                     GpusText(closest), DurationText(closest.time_s),
                     closest.cost.ToRoundedString());
}

}  // namespace

namespace {
std::string CountText(double count) {
  if (count >= 1e9) return fmt::format("{:.3g}B", count / 1e9);
  if (count >= 1e6) return fmt::format("{:.3g}M", count / 1e6);
  if (count >= 1e4) return fmt::format("{:.3g}k", count / 1e3);
  return fmt::format("{:g}", count);
}
}  // namespace

std::string WorkText(const Workload& w) {
  const WorkAmount& work = w.work;
  const ModelSpec& m = w.model;
  if (m.kind == ModelKind::kDiffusion) {
    const double images = work.images > 0 ? work.images : std::max(work.requests, work.samples);
    return fmt::format("{} images at {}x{}, {} steps each", CountText(images), w.image_size,
                       w.image_size, w.steps);
  }
  if (work.samples > 0) {
    const std::string what = m.kind == ModelKind::kVision ? "images" : "samples";
    if (work.epochs > 1)
      return fmt::format("{} epochs of {} {}", work.epochs, CountText(work.samples), what);
    return fmt::format("{} {}", CountText(work.samples), what);
  }
  if (IsTraining(w.task)) return fmt::format("{} training tokens", CountText(work.tokens));
  if (work.requests > 0 && m.kind == ModelKind::kEncoder) {  // encoders read, they do not generate
    return fmt::format("{} sequences of {} tokens", CountText(work.requests), w.prompt_tokens);
  }
  if (work.requests > 0) {
    return fmt::format("{} requests of {} prompt + {} generated tokens", CountText(work.requests),
                       w.prompt_tokens, w.gen_tokens);
  }
  if (work.images > 0) return fmt::format("{} images", CountText(work.images));
  return fmt::format("{} generated tokens ({}-token prompts)", CountText(work.tokens),
                     w.prompt_tokens);
}

std::string DurationText(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return "—";
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 2 * 3600) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 72 * 3600) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

std::string GpusText(const Estimate& e) {
  return e.count == 1 ? e.gpu->name : fmt::format("{}x {}", e.count, e.gpu->name);
}

std::string RateText(const Estimate& e) {
  const Throughput& t = e.throughput;
  if (t.train_tokens_per_s) return fmt::format("{:.0f} tokens/s", *t.train_tokens_per_s);
  if (t.decode_tokens_per_s) return fmt::format("{:.0f} tokens/s", *t.decode_tokens_per_s);
  if (t.images_per_s) return fmt::format("{:.2f} images/s", *t.images_per_s);
  if (t.samples_per_s) return fmt::format("{:.0f} samples/s", *t.samples_per_s);
  return "";
}

double PrimaryRate(const Estimate& e) {
  const Throughput& t = e.throughput;
  if (t.train_tokens_per_s) return *t.train_tokens_per_s;
  if (t.decode_tokens_per_s) return *t.decode_tokens_per_s;
  if (t.images_per_s) return *t.images_per_s;
  if (t.samples_per_s) return *t.samples_per_s;
  return 0;
}

Advice Advise(const Workload& workload, const catalog::Catalog& catalog,
              const AdviseOptions& options, const Efficiency& efficiency) {
  Advice advice;
  advice.workload = workload;
  std::vector<GpuChoice> choices = options.gpus;
  if (choices.empty()) {
    for (const catalog::GpuType& gpu : catalog.gpus()) choices.push_back({&gpu, 0, 0});
  }
  for (const GpuChoice& choice : choices) {
    if (choice.count > 0) {
      advice.estimates.push_back(
          EstimateOn(workload, *choice.gpu, choice.count, efficiency, options.costs));
      continue;
    }
    // The smallest power-of-two count that fits; the largest tried stands for "does not fit".
    Estimate estimate;
    const int most = choice.max_count > 0 ? choice.max_count : options.max_count;
    for (int count = 1; count <= most; count *= 2) {
      estimate = EstimateOn(workload, *choice.gpu, count, efficiency, options.costs);
      if (estimate.fits || !estimate.supported) break;
    }
    advice.estimates.push_back(std::move(estimate));
  }
  std::stable_sort(
      advice.estimates.begin(), advice.estimates.end(), [&](const Estimate& a, const Estimate& b) {
        const int tier_a = Tier(a, options);
        const int tier_b = Tier(b, options);
        if (tier_a != tier_b) return tier_a < tier_b;
        if (tier_a >= 3)
          return a.memory.Total() / a.memory_capacity < b.memory.Total() / b.memory_capacity;
        if (a.cost != b.cost) return a.cost < b.cost;
        return a.time_s < b.time_s;
      });
  if (!advice.estimates.empty() && Qualifies(advice.estimates.front(), options)) {
    advice.recommendation.index = 0;
    advice.recommendation.reason = ExplainPick(advice, options);
  } else {
    advice.recommendation.reason = ExplainNothing(advice, options);
  }
  return advice;
}

}  // namespace suanli::advisor
