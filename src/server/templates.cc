#include "server/templates.h"

#include <string_view>

#include "catalog/data_file.h"
#include "wire/views.h"

namespace suanli::server {

std::string_view BuiltInTemplatesYaml();  // embedded by CMake

core::Result<std::vector<core::Template>> LoadBuiltInTemplates() {
  const catalog::DataFile file{"data/templates.yaml", BuiltInTemplatesYaml()};
  core::Result<YAML::Node> root = catalog::ParseYamlFile(file);
  if (!root.ok()) return root.status();
  core::Result<YAML::Node> list = catalog::TopLevelList(file, *root, "templates");
  if (!list.ok()) return list.status();
  std::vector<core::Template> templates;
  for (const YAML::Node& node : *list) {
    catalog::YamlEntry entry(file, node, "template");
    entry.RejectUnknownFields({"id", "name", "description", "image", "command", "env", "ports",
                               "container_disk_gb", "volume_gb", "volume_mount_path"});
    core::Template spec;
    spec.id = entry.String("id");
    entry.set_label("template " + spec.id);
    spec.name = entry.String("name");
    spec.description = entry.String("description");
    spec.image = entry.String("image");
    spec.command = entry.StringList("command");
    for (const std::string& pair : entry.StringList("env")) {
      const size_t equals = pair.find('=');
      if (equals == std::string::npos || equals == 0) {
        entry.Fail("env", "'" + pair + "' must be NAME=value");
        continue;
      }
      spec.env[pair.substr(0, equals)] = pair.substr(equals + 1);
    }
    for (const std::string& text : entry.StringList("ports")) {
      core::Result<core::PortSpec> port = wire::ParsePort(text);
      if (!port.ok()) {
        entry.Fail("ports", port.status().message());
        continue;
      }
      spec.ports.push_back(*port);
    }
    spec.container_disk_gb = entry.PositiveInteger("container_disk_gb");
    spec.volume_gb = entry.PositiveInteger("volume_gb");
    spec.volume_mount_path = entry.String("volume_mount_path");
    spec.is_public = true;
    if (!entry.status().ok()) return entry.status();
    templates.push_back(std::move(spec));
  }
  return templates;
}

}  // namespace suanli::server
