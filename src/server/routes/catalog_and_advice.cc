// Routes for choosing a GPU: the catalog with this cloud's prices, what is free now, the advisor's
// model zoo, and its advice for a workload.
#include <boost/json/value.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advice_json.h"
#include "advisor/measured.h"
#include "catalog/catalog_json.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/json_fields.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

void Gpus(Call& call) {
  json::array gpus;
  for (const catalog::GpuType& gpu : call.plane().catalog().gpus()) {
    json::object entry = catalog::GpuTypeToJson(gpu);
    entry["price_per_hour_micros"] = call.plane().GpuPrice(gpu.name).micros();
    gpus.emplace_back(std::move(entry));
  }
  call.Respond(JsonResponse(200, json::object{{"gpus", std::move(gpus)}}));
}

// What a type's GPUs measured (advisor/measured.h), or null.
json::value MeasuredView(const std::optional<advisor::MeasuredFigures>& measured) {
  if (!measured) return nullptr;
  json::object out{{"gpus", measured->gpus},
                   {"memory_bandwidth_gbps", measured->memory_bandwidth_gbps},
                   {"fp16_tflops", measured->fp16_tflops}};
  if (measured->bf16_tflops) out["bf16_tflops"] = *measured->bf16_tflops;
  if (measured->fp8_tflops) out["fp8_tflops"] = *measured->fp8_tflops;
  return out;
}

void Availability(Call& call) {
  call.Respond(call.plane().GpuAvailability(call.principal),
               [](const std::vector<server::Availability>& all) {
                 return ListOf("gpus", all, [](const server::Availability& entry) {
                   return json::object{{"gpu_type", entry.gpu_type},
                                       {"total", entry.total},
                                       {"free", entry.free},
                                       {"stranded", entry.stranded},
                                       {"largest_free_on_one_node", entry.largest_free_on_one_node},
                                       {"largest_on_one_node", entry.largest_on_one_node},
                                       {"shared_free_milli", entry.shared_free_milli},
                                       {"largest_share_free_milli", entry.largest_share_free_milli},
                                       {"price_per_hour_micros", entry.price_per_hour.micros()},
                                       {"simulated", entry.simulated},
                                       {"measured", MeasuredView(entry.measured)}};
                 });
               });
}

void Models(Call& call) {
  json::array models;
  for (const advisor::ModelSpec& model : call.zoo().models()) {
    models.emplace_back(advisor::ModelToJson(model));
  }
  call.Respond(JsonResponse(200, json::object{{"models", std::move(models)}}));
}

// The advice's reasons and notes say what to change in the workload's field names, not the CLI's.
void FlagsToFieldNames(json::object& advice) {
  const auto rename = [](json::value* text) {
    if (text != nullptr && text->is_string()) {
      *text = InWorkloadFieldNames(std::string(text->as_string()));
    }
  };
  if (json::value* recommendation = advice.if_contains("recommendation");
      recommendation != nullptr && recommendation->is_object()) {
    rename(recommendation->as_object().if_contains("reason"));
  }
  if (json::value* estimates = advice.if_contains("estimates");
      estimates != nullptr && estimates->is_array()) {
    for (json::value& estimate : estimates->as_array()) {
      if (!estimate.is_object()) continue;
      rename(estimate.as_object().if_contains("reason"));
      if (json::value* notes = estimate.as_object().if_contains("notes");
          notes != nullptr && notes->is_array()) {
        for (json::value& note : notes->as_array()) rename(&note);
      }
    }
  }
}

// The advice for a workload, by default on what this cloud has (docs/api.md, "Advice"): each GPU
// type its nodes have, at most as many as its largest node of the type holds, at this cloud's
// prices, with how many it has and has free now, and as fast as its GPUs measured where their
// agents ran the probe (advisor/measured.h). "scope": "market" asks for every catalog type, as
// their datasheets say.
void Advise(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  const std::optional<advisor::Workload> workload = ReadWorkload(fields, call.zoo());
  std::string scope = "cluster";
  fields.String("scope", &scope, {.max_length = 16});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  if (!workload) {
    return call.Respond(core::InvalidArgumentError(
        "workload: required, e.g. {\"model\": \"llama-3-8b\", \"task\": \"lora\"}"));
  }
  if (scope != "cluster" && scope != "market") {
    return call.Respond(core::InvalidArgumentError(
        "scope: cluster (the GPU types this cloud has; the default) or market (every catalog "
        "type), not '" +
        scope + "'"));
  }
  Result<Written<std::vector<server::Availability>>> available =
      call.plane().GpuAvailability(call.principal);
  if (!available.ok()) return call.Respond(available.status());
  std::map<std::string, server::Availability> in_cluster;
  for (server::Availability& entry : available->value) {
    if (entry.total > 0) in_cluster.emplace(entry.gpu_type, std::move(entry));
  }
  // A cloud without nodes yet has nothing of its own to rank: the market, and it says so.
  const bool market = scope == "market" || in_cluster.empty();
  // The estimates point into the catalog, so they become JSON while it lives.
  call.Respond(call.plane().PricedCatalog(call.principal), [&](const catalog::Catalog& priced) {
    advisor::AdviseOptions options;
    std::map<std::string, advisor::Calibrated> calibrated;  // the estimates point into it too
    for (const auto& [name, entry] : in_cluster) {
      Result<const catalog::GpuType*> gpu = priced.FindExact(name);
      if (market || !gpu.ok()) continue;
      const catalog::GpuType* as_it_runs = *gpu;
      if (entry.measured) {
        as_it_runs = &calibrated.emplace(name, advisor::CalibrateToMeasured(**gpu, *entry.measured))
                          .first->second.gpu;
      }
      options.gpus.push_back({as_it_runs, 0, entry.largest_on_one_node});
    }
    json::object advice = advisor::AdviceToJson(advisor::Advise(*workload, priced, options));
    FlagsToFieldNames(advice);
    advice["scope"] = market ? "market" : "cluster";
    if (market && scope == "cluster") {
      advice["scope_note"] = "this cloud has no GPU nodes yet, so every catalog type is shown";
    }
    if (json::value* estimates = advice.if_contains("estimates"); estimates != nullptr) {
      for (json::value& estimate : estimates->as_array()) {
        const auto it = in_cluster.find(std::string(estimate.at("gpu").as_string()));
        estimate.as_object()["cluster_gpus"] = it == in_cluster.end() ? 0 : it->second.total;
        estimate.as_object()["free_now"] = it == in_cluster.end() ? 0 : it->second.free;
        const auto measured = calibrated.find(std::string(estimate.at("gpu").as_string()));
        if (measured == calibrated.end()) continue;
        json::object figures = MeasuredView(it->second.measured).as_object();
        figures["bandwidth_scale"] = measured->second.bandwidth_scale;
        figures["compute_scale"] = measured->second.compute_scale;
        estimate.as_object()["measured"] = std::move(figures);
        if (json::value* notes = estimate.as_object().if_contains("notes");
            notes != nullptr && notes->is_array()) {
          notes->as_array().emplace_back(measured->second.note);
        }
      }
    }
    return advice;
  });
}

// clang-format off
constexpr Route kCatalogRoutes[] = {
  {{"GET", "/v1/gpus", RouteAccess::kPublic, "The GPU catalog with this cloud's prices"}, Gpus},
  {{"GET", "/v1/availability", RouteAccess::kUser, "Free GPUs by type, with prices"}, Availability},
  {{"GET", "/v1/models", RouteAccess::kPublic, "The advisor's model zoo"}, Models},
  {{"POST", "/v1/advise", RouteAccess::kUser, "A workload's memory, speed, time and cost on every GPU type, and which to pick"}, Advise},
};
// clang-format on

}  // namespace

std::span<const Route> CatalogRoutes() { return kCatalogRoutes; }

}  // namespace suanli::server
