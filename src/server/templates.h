// The built-in pod templates (data/templates.yaml, embedded in the binary).
#pragma once

#include <vector>

#include "core/domain.h"
#include "core/status.h"

namespace suanli::server {

// INVALID_ARGUMENT naming file:line for a broken entry (a test loads the embedded file).
core::Result<std::vector<core::Template>> LoadBuiltInTemplates();

}  // namespace suanli::server
