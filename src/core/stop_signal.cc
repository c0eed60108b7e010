#include "core/stop_signal.h"

#include <csignal>
#include <ctime>

namespace suanli::core {
namespace {

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

}  // namespace

void BlockStopSignals() {
  const sigset_t signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

Status WaitForStopSignal(const std::function<Status()>& check) {
  const sigset_t signals = StopSignals();
  const timespec poll{0, 250'000'000};
  while (true) {
    const int signal = sigtimedwait(&signals, nullptr, &poll);
    if (signal == SIGTERM || signal == SIGINT) return Status();
    if (Status failure = check(); !failure.ok()) return failure;
  }
}

}  // namespace suanli::core
