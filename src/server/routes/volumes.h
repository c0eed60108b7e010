// What the route files share about volumes: handing the engine volumes nodes may delete to their
// agents (ControlPlane::TakeVolumeRemovals), after a change that may have freed some.
//
// Internal to the API.
#pragma once

#include "server/control_plane.h"
#include "server/relay.h"

namespace suanli::server {

// Queues, through `relay`, a request to each node to delete an engine volume it no longer needs;
// their answers are not awaited (best effort: a node that is away keeps its copy).
void SendVolumeRemovals(ControlPlane& plane, Relay& relay);

// Submits, through `relay`, what node `node_id`'s agent must do for snapshots now
// (ControlPlane::TakeStorageWork) and tells the control plane each answer. Called as the agent
// polls its relay, and after a change that gave its node work.
void SendStorageWork(ControlPlane& plane, Relay& relay, const std::string& node_id);

}  // namespace suanli::server
