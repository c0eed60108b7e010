// Waiting for SIGTERM or SIGINT in a process made of threads: the signals are blocked in every
// thread (so none is interrupted mid-write) and one thread waits for them.
#pragma once

#include <functional>

#include "core/status.h"

namespace suanli::core {

// Call before starting any thread: the threads inherit the mask.
void BlockStopSignals();

// Returns OK when SIGTERM or SIGINT arrives, or the first non-OK Status `check` returns (it is
// called every 250 ms, for failures that stop a process by themselves).
Status WaitForStopSignal(const std::function<Status()>& check);

}  // namespace suanli::core
