// The readiness probe: whether something in a running pod answers on one of its published ports.
// A pod is "ready" (what `pods create --wait` waits for) once every port answers.
//
// An "http" port must answer an HTTP request (any status); a "tcp" port must accept, then either
// greet (an SSH banner) or stay silent, waiting for its client to speak. A connection that is
// accepted and then closed without a word is "not yet": the engine's port forwarder accepts even
// when nothing listens inside the container, and closes then.
#pragma once

#include <string>

#include "core/domain.h"

namespace suanli::agent {

// Probes `port.host_port` on `address` (IPv4) once, per `port.protocol` as above. Blocks for at
// most about 1.5 s (0.5 s to connect, then 1 s for an HTTP answer or 0.3 s for a TCP greeting).
// False, never an error, for anything that is not an answer: a refused or unreachable port, a
// closed connection, a non-HTTP answer on an http port.
bool PortAnswers(const std::string& address, const core::PortMapping& port);

}  // namespace suanli::agent
