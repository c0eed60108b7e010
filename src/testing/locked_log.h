// LockedLog: a std::ostream that threads under test may write while the test reads what was
// written. A std::ostringstream is not: its str() races with a write from another thread (TSan
// found it in AgentFaultsTest, reading an agent's log while its sync thread logged). Every write
// and every read takes one mutex; the buffer has no put area, so even a single character (endl's
// newline) goes through overflow and its lock. Header-only, for tests.
#pragma once

#include <cstdio>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

namespace suanli::testing {

class LockedLog : public std::ostream {
 public:
  LockedLog() : std::ostream(&buffer_) {}
  LockedLog(const LockedLog&) = delete;
  LockedLog& operator=(const LockedLog&) = delete;

  // What was written so far; named as std::ostringstream's, which it replaces in tests.
  std::string str() const {
    std::lock_guard<std::mutex> lock(buffer_.mutex);
    return buffer_.text;
  }

 private:
  struct Buffer : std::streambuf {
    int_type overflow(int_type c) override {
      if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
      std::lock_guard<std::mutex> lock(mutex);
      text.push_back(traits_type::to_char_type(c));
      return c;
    }
    std::streamsize xsputn(const char* data, std::streamsize size) override {
      std::lock_guard<std::mutex> lock(mutex);
      text.append(data, static_cast<size_t>(size));
      return size;
    }
    mutable std::mutex mutex;
    std::string text;
  };
  Buffer buffer_;
};

}  // namespace suanli::testing
