// Routes for pod templates: the built-in and public ones, and a person's own.
#include <boost/json/value.hpp>
#include <utility>
#include <vector>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

void ListTemplates(Call& call) {
  call.Respond(call.plane().ListTemplates(call.principal),
               [](const std::vector<core::Template>& templates) {
                 return ListOf("templates", templates, wire::TemplateView);
               });
}

void CreateTemplate(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  TemplateSpec spec;
  fields.String("name", &spec.name, {.required = true, .max_length = 64});
  fields.String("description", &spec.description, {.max_length = 1024});
  fields.String("image", &spec.image, {.required = true, .max_length = 512});
  fields.StringList("command", &spec.command);
  fields.StringMap("env", &spec.env);
  bool has_ports = false;
  spec.ports = ReadPorts(fields, &has_ports);
  fields.Int("container_disk_gb", &spec.container_disk_gb, {1, 10'000});
  fields.Int("volume_gb", &spec.volume_gb, {0, 100'000});
  fields.String("volume_mount_path", &spec.volume_mount_path, {.max_length = 256});
  fields.Bool("public", &spec.is_public);
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().CreateTemplate(call.principal, std::move(spec)), wire::TemplateView,
               201);
}

void GetTemplate(Call& call) {
  call.Respond(call.plane().GetTemplate(call.principal, call.param(0)), wire::TemplateView);
}

void DeleteTemplate(Call& call) {
  call.Respond(call.plane().DeleteTemplate(call.principal, call.param(0)), wire::TemplateView);
}

// clang-format off
constexpr Route kTemplateRoutes[] = {
  {{"GET", "/v1/templates", RouteAccess::kUser, "Templates you can deploy"}, ListTemplates},
  {{"POST", "/v1/templates", RouteAccess::kUser, "Create a template (public: admin)"}, CreateTemplate},
  {{"GET", "/v1/templates/{id}", RouteAccess::kUser, "A template"}, GetTemplate},
  {{"DELETE", "/v1/templates/{id}", RouteAccess::kUser, "Delete your template"}, DeleteTemplate},
};
// clang-format on

}  // namespace

std::span<const Route> TemplateRoutes() { return kTemplateRoutes; }

}  // namespace suanli::server
