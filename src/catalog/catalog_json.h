// The JSON form of a GPU type, as `suanli gpus --json` and the API print it (PRODUCT.md's
// contract).
//
// Money becomes dollars as a JSON number here, for people and scripts; it stays integer
// micro-dollars everywhere it is added up. Figures a GPU lacks (fp8_tflops on an A100) are null.
#pragma once

#include <boost/json/object.hpp>

#include "catalog/gpu_type.h"

namespace suanli::catalog {

boost::json::object GpuTypeToJson(const GpuType& gpu);

}  // namespace suanli::catalog
