// What agent.cc (the running agent) and agent_start.cc (Agent::Start: options checked, GPUs
// found, engine and state opened) share. Included by those files only.
#pragma once

#include <memory>
#include <ostream>

#include "agent/agent.h"
#include "agent/engine.h"
#include "agent/gpus.h"
#include "agent/state_db.h"
#include "core/clock.h"

namespace suanli::agent {

// Starts the agent's threads over parts already opened, with `options` resolved (no empty
// defaults left) and `gpu_access` decided (not kNone unless the host has no GPU access at all).
std::unique_ptr<Agent> BeginAgent(AgentOptions options, core::Clock& clock, std::ostream& log,
                                  std::unique_ptr<StateDb> state, std::unique_ptr<Engine> engine,
                                  GpuInventory gpus, std::unique_ptr<Nvml> nvml,
                                  GpuAccess gpu_access);

}  // namespace suanli::agent
