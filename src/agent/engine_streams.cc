// What the engine sends that is read without a connection: its multiplexed log frames
// (LogDemuxer) and its time text (ParseEngineTime). Declared in engine.h; split from engine.cc,
// which keeps the calls.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "agent/engine.h"

namespace suanli::agent {

bool LogDemuxer::Feed(std::string_view piece, std::string& text) {
  if (!error_.empty()) return false;
  if (!framed_) {
    text.append(piece);
    return true;
  }
  constexpr size_t kHeaderBytes = 8;
  while (!piece.empty()) {
    if (payload_left_ == 0) {
      const size_t take = std::min(kHeaderBytes - header_.size(), piece.size());
      header_.append(piece.substr(0, take));
      piece.remove_prefix(take);
      if (header_.size() < kHeaderBytes) break;
      auto byte = [this](size_t i) { return static_cast<unsigned char>(header_[i]); };
      if (byte(0) > 3 || byte(1) != 0 || byte(2) != 0 || byte(3) != 0) {
        error_ = "the engine's log stream is malformed (a frame header starts with byte " +
                 std::to_string(byte(0)) + "); does the container have a TTY?";
        return false;
      }
      stream_ = byte(0);
      payload_left_ = (uint32_t{byte(4)} << 24) | (uint32_t{byte(5)} << 16) |
                      (uint32_t{byte(6)} << 8) | uint32_t{byte(7)};
      header_.clear();
      if (payload_left_ == 0 && stream_ == 3) {
        error_ = "the engine reported an error reading the logs";
        return false;
      }
      continue;
    }
    const size_t take = std::min<size_t>(payload_left_, piece.size());
    // Stream 3 is the engine's own error (e.g. its log driver failed), not the container's text.
    (stream_ == 3 ? engine_error_ : text).append(piece.substr(0, take));
    payload_left_ -= static_cast<uint32_t>(take);
    piece.remove_prefix(take);
    if (payload_left_ == 0 && stream_ == 3) {
      while (!engine_error_.empty() && engine_error_.back() == '\n') engine_error_.pop_back();
      error_ = "the engine reported: " + engine_error_;
      return false;
    }
  }
  return true;
}

std::optional<core::TimePoint> ParseEngineTime(std::string_view text) {
  if (text.empty() || text.starts_with("0001-01-01")) return std::nullopt;
  std::string utc(text);
  std::chrono::minutes offset{0};
  if (!text.ends_with('Z')) {
    // "...+08:00": Podman keeps the host's zone.
    if (text.size() < 6) return std::nullopt;
    std::string_view zone = text.substr(text.size() - 6);
    auto digit = [&zone](size_t i) { return std::isdigit(static_cast<unsigned char>(zone[i])); };
    if ((zone[0] != '+' && zone[0] != '-') || !digit(1) || !digit(2) || zone[3] != ':' ||
        !digit(4) || !digit(5)) {
      return std::nullopt;
    }
    const int minutes =
        ((zone[1] - '0') * 10 + (zone[2] - '0')) * 60 + (zone[4] - '0') * 10 + (zone[5] - '0');
    offset = std::chrono::minutes(zone[0] == '+' ? minutes : -minutes);
    utc = std::string(text.substr(0, text.size() - 6)) + "Z";
  }
  core::Result<core::TimePoint> parsed = core::ParseTime(utc);
  if (!parsed.ok()) return std::nullopt;
  return *parsed - offset;  // local = UTC + offset
}

}  // namespace suanli::agent
