// What crosses the network between agents and the server, decoded by the side that did not write
// it: heartbeats, registrations and pod reports (read by the server from any node), the desired
// pods and relayed requests (read by an agent), relayed answers (read by the server). The first
// byte picks the decoder; the rest is the message. Each must answer a Status, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wire/agent_protocol.h"
#include "wire/relay_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace wire = suanli::wire;
  switch (data[0] % 7) {
    case 0:
      (void)wire::DecodeNodeReport(text, wire::NodeReportFor::kHeartbeat);
      break;
    case 1:
      (void)wire::DecodeNodeReport(text, wire::NodeReportFor::kRegistration);
      break;
    case 2:
      (void)wire::DecodeRegistration(text);
      break;
    case 3:
      (void)wire::DecodePodReport(text);
      break;
    case 4:
      (void)wire::DecodeDesiredPods(text);
      break;
    case 5:
      (void)wire::DecodeRelayRequests(text);
      break;
    default:
      (void)wire::DecodeRelayAnswer(text);
      break;
  }
  return 0;
}
