// The catalog's data files, parsed into a Catalog.
//
// gpus.yaml holds the specs of each GPU type; prices.yaml its typical rent and buy prices, each
// with a source and a date. Both are compiled into the binary from data/, so suanli runs from any
// folder. An operator's price file has the same shape as prices.yaml but may list any subset of
// types and fields; it replaces the built-in prices it names. Every error names the file, the line
// and the field.
#pragma once

#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "catalog/data_file.h"
#include "core/status.h"

namespace suanli::catalog {

// INVALID_ARGUMENT, naming file, line and field, for malformed YAML, a missing or bad field, an
// unknown field, a duplicate GPU, a price for an unknown GPU, or a GPU that `prices` leaves without
// a price.
core::Result<Catalog> LoadCatalog(const DataFile& gpus, const DataFile& prices,
                                  const DataFile* price_override = nullptr);

// The built-in catalog, with the operator's prices on top where `price_override` is given.
core::Result<Catalog> LoadBuiltInCatalog(const DataFile* price_override = nullptr);

// The built-in data files, as compiled from data/.
std::string_view BuiltInGpusYaml();
std::string_view BuiltInPricesYaml();

}  // namespace suanli::catalog
