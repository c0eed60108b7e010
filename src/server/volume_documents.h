// The store's documents of volumes, and of a pod's named volumes and moves (documents.h is the
// format's contract: every field, forgiving only of a field an older version did not write).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "core/domain.h"
#include "core/status.h"
#include "wire/json_fields.h"

namespace suanli::server {

boost::json::object ToDocument(const core::Volume& volume);
core::Result<core::Volume> VolumeFromDocument(const boost::json::object& document);
std::string DocumentText(const core::Volume& volume);
boost::json::object ToDocument(const core::Snapshot& snapshot);
core::Result<core::Snapshot> SnapshotFromDocument(const boost::json::object& document);
std::string DocumentText(const core::Snapshot& snapshot);

// A pod's "volumes" and "moves" fields (absent in older stores: none).
boost::json::array VolumeMountsDocument(const std::vector<core::VolumeMount>& mounts);
boost::json::array VolumeMovesDocument(const std::vector<core::VolumeMove>& moves);
void ReadVolumeMounts(wire::JsonFields& fields, std::vector<core::VolumeMount>* out);
void ReadVolumeMoves(wire::JsonFields& fields, std::vector<core::VolumeMove>* out);

}  // namespace suanli::server
