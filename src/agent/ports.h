// Host ports for pods' published ports.
//
// They come from 20000-32767, below Linux's ephemeral range (32768-60999 by default), from which
// the kernel takes the local port of every outgoing connection. A port picked from the ephemeral
// range (by binding port 0) can be taken by any connection in the moment before the engine binds
// it, and the pod then fails to start with "address already in use"; one picked below it stays free
// unless another program binds it on purpose. The scan starts at a random port, so two agents (or
// tests) sharing a host seldom try the same one.
#pragma once

#include <set>
#include <string_view>

#include "core/status.h"

namespace suanli::agent {

inline constexpr int kFirstPodPort = 20000;
inline constexpr int kLastPodPort = 32767;

// A port in [kFirstPodPort, kLastPodPort] that is not in `taken` and can be bound on `address`
// (IPv4; "" or "0.0.0.0": every address) now. INVALID_ARGUMENT for an address that is not IPv4,
// UNAVAILABLE when every port is in use.
core::Result<int> FreeHostPort(std::string_view address, const std::set<int>& taken);

}  // namespace suanli::agent
