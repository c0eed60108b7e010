#include "agent/activity.h"

#include <gtest/gtest.h>

namespace suanli::agent {
namespace {

// /proc/net/tcp as Linux writes it: port 2222 (0x08AE) with two established connections and one
// listening socket, port 8080 (0x1F90) with one in TIME_WAIT (06).
constexpr std::string_view kTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 00000000:08AE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
    "1 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:08AE 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 "
    "2 1 0000000000000000 20 4 30 10 -1\n"
    "   2: 0A00020F:08AE 0A000201:C350 01 00000000:00000000 00:00000000 00000000     0        0 "
    "3 1 0000000000000000 20 4 30 10 -1\n"
    "   3: 0100007F:1F90 0100007F:C351 06 00000000:00000000 00:00000000 00000000     0        0 "
    "0 1 0000000000000000\n"
    "garbage line\n";

TEST(ActivityTest, CountsOnlyEstablishedConnectionsToThePort) {
  EXPECT_EQ(CountEstablished(kTcp, 2222), 2);
  EXPECT_EQ(CountEstablished(kTcp, 8080), 0);  // TIME_WAIT is not a session
  EXPECT_EQ(CountEstablished(kTcp, 22), 0);
  EXPECT_EQ(CountEstablished("", 2222), 0);
  // tcp6: a longer address, the same layout.
  EXPECT_EQ(CountEstablished("   0: 0000000000000000FFFF00000100007F:08AE "
                             "0000000000000000FFFF00000100007F:E2A4 01 0:0\n",
                             2222),
            1);
}

TEST(ActivityTest, CpuPercentIsOfOneCpuOverTheWallTime) {
  using std::chrono::seconds;
  EXPECT_DOUBLE_EQ(CpuPercent(0, 500'000'000, seconds(1)), 50.0);
  EXPECT_DOUBLE_EQ(CpuPercent(1'000'000'000, 5'000'000'000, seconds(2)), 200.0);  // two CPUs
  EXPECT_DOUBLE_EQ(CpuPercent(5, 4, seconds(1)), 0.0);  // restarted: the counter went back
  EXPECT_DOUBLE_EQ(CpuPercent(0, 10, seconds(0)), 0.0);
}

}  // namespace
}  // namespace suanli::agent
