// Durable pod creates through the HTTP API, end to end: `POST /v1/pods` from many keep-alive
// connections against a real server (SQLite, WAL, synchronous=FULL, group commit), each answered
// 201 only once its commit is durable. Reports creates/s, latency percentiles, creates per second
// of the run (so a slowdown as pending pods pile up shows), and the group size from /metrics.
//
// By default the server runs in this process (Server::Start, 2 I/O threads) on a temporary data
// directory; --url and --data-dir point it at a running `suanli server` instead. No node is
// registered, so every pod stays pending. Results in docs/benchmarks.md.
//
// The load generator is written here with epoll rather than with net::HttpClient: HttpClient is
// blocking with one connection per thread, and 64 client threads on a 2-core machine would measure
// the kernel's scheduler as much as the server. Two threads each drive their share of the
// connections, one request in flight per connection, and parse only the status line and
// Content-Length of each answer.
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "net/http_client.h"
#include "server/server.h"
#include "testing/temp_dir.h"

namespace suanli::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Options {
  double seconds = 10;
  int connections = 64;
  int threads = 2;
  int server_threads = 2;
  std::string url;  // empty: start a server in this process
  std::string data_dir;
  std::string store;  // the in-process server's store URL; empty: SQLite in its data directory
};

struct Target {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
};

// One keep-alive connection with at most one request in flight.
struct Connection {
  int fd = -1;
  std::string in;
  SteadyClock::time_point sent_at;
  bool in_flight = false;
};

// What one load thread saw. Latencies in microseconds, of answers inside the measured window.
struct ThreadResult {
  std::vector<uint32_t> latencies_us;
  uint64_t created = 0;
  uint64_t failed = 0;
  std::string first_failure;
};

struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> created{0};  // all 201s, for the per-second series
  SteadyClock::time_point window_end;
};

int Connect(const Target& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(target.port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
      errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  pollfd ready{fd, POLLOUT, 0};
  int error = 0;
  socklen_t length = sizeof(error);
  if (::poll(&ready, 1, 5000) != 1 ||
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// Writes all of `data` to a nonblocking socket; a full send buffer (never seen with requests this
// small) waits for it to drain.
bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      data.remove_prefix(static_cast<size_t>(sent));
    } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd ready{fd, POLLOUT, 0};
      if (::poll(&ready, 1, 5000) != 1) return false;
    } else if (sent < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

// If `in` holds a whole response: its status and length in bytes. The server always sends
// Content-Length (Beast's prepare_payload), never chunked bodies, for these routes.
std::optional<std::pair<int, size_t>> CompleteResponse(std::string_view in) {
  const size_t header_end = in.find("\r\n\r\n");
  if (header_end == std::string_view::npos) return std::nullopt;
  int status = 0;
  if (in.size() < 12) return std::nullopt;
  std::from_chars(in.data() + 9, in.data() + 12, status);
  size_t body_length = 0;
  const std::string_view headers = in.substr(0, header_end);
  for (size_t at = headers.find("\r\n"); at != std::string_view::npos;
       at = headers.find("\r\n", at + 2)) {
    const std::string_view line = headers.substr(at + 2, headers.find("\r\n", at + 2) - at - 2);
    constexpr std::string_view kName = "content-length:";
    if (line.size() > kName.size() &&
        std::equal(kName.begin(), kName.end(), line.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        })) {
      std::string_view value = line.substr(kName.size());
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      std::from_chars(value.data(), value.data() + value.size(), body_length);
    }
  }
  const size_t total = header_end + 4 + body_length;
  if (in.size() < total) return std::nullopt;
  return std::pair<int, size_t>(status, total);
}

void LoadThread(const Target& target, int connection_count, const std::string& request,
                Shared& shared, ThreadResult& result) {
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<Connection> connections(static_cast<size_t>(connection_count));
  for (size_t i = 0; i < connections.size(); ++i) {
    Connection& connection = connections[i];
    connection.fd = Connect(target);
    if (connection.fd < 0) {
      ++result.failed;
      result.first_failure = "cannot connect";
      continue;
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = i;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, connection.fd, &event);
  }
  const auto send_next = [&](Connection& connection) {
    connection.sent_at = SteadyClock::now();
    connection.in_flight = SendAll(connection.fd, request);
    if (!connection.in_flight) {
      ++result.failed;
      if (result.first_failure.empty()) result.first_failure = "send failed";
    }
  };
  for (Connection& connection : connections) {
    if (connection.fd >= 0) send_next(connection);
  }
  std::vector<epoll_event> events(static_cast<size_t>(connection_count));
  char buffer[65536];
  const auto drain_deadline = shared.window_end + std::chrono::seconds(30);
  while (true) {
    const bool stopping = shared.stop.load(std::memory_order_relaxed);
    if (stopping && std::none_of(connections.begin(), connections.end(),
                                 [](const Connection& c) { return c.in_flight; })) {
      break;
    }
    if (SteadyClock::now() > drain_deadline) break;
    const int ready = ::epoll_wait(epoll, events.data(), connection_count, 100);
    for (int e = 0; e < ready; ++e) {
      Connection& connection = connections[events[static_cast<size_t>(e)].data.u64];
      const ssize_t got = ::recv(connection.fd, buffer, sizeof(buffer), 0);
      if (got <= 0) {
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        ++result.failed;
        if (result.first_failure.empty()) result.first_failure = "the server closed a connection";
        ::epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, nullptr);
        connection.in_flight = false;
        continue;
      }
      connection.in.append(buffer, static_cast<size_t>(got));
      const std::optional<std::pair<int, size_t>> response = CompleteResponse(connection.in);
      if (!response) continue;
      const auto now = SteadyClock::now();
      connection.in_flight = false;
      if (response->first == 201) {
        shared.created.fetch_add(1, std::memory_order_relaxed);
        if (now <= shared.window_end) {
          ++result.created;
          result.latencies_us.push_back(static_cast<uint32_t>(
              std::chrono::duration_cast<std::chrono::microseconds>(now - connection.sent_at)
                  .count()));
        }
      } else {
        ++result.failed;
        if (result.first_failure.empty()) {
          result.first_failure = connection.in.substr(0, response->second);
        }
      }
      connection.in.erase(0, response->second);
      if (!shared.stop.load(std::memory_order_relaxed)) send_next(connection);
    }
  }
  for (Connection& connection : connections) {
    if (connection.fd >= 0) ::close(connection.fd);
  }
  ::close(epoll);
}

// Sends one request with net::HttpClient; exits on anything but `expected`.
std::string MustSend(net::HttpClient& client, std::string_view method, std::string_view target,
                     std::string_view body, const std::string& token, int expected) {
  net::Headers headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  core::Result<net::HttpResponse> response = client.Send(method, target, body, headers);
  if (!response.ok()) {
    std::cerr << method << " " << target << ": " << response.status().ToString() << "\n";
    std::exit(1);
  }
  if (response->status != expected) {
    std::cerr << method << " " << target << ": " << response->status << " " << response->body
              << "\n";
    std::exit(1);
  }
  return response->body;
}

// The value of an unlabelled counter in Prometheus text, or -1.
double Counter(const std::string& metrics, std::string_view name) {
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ' ') {
      return std::stod(line.substr(name.size() + 1));
    }
  }
  return -1;
}

uint32_t Percentile(const std::vector<uint32_t>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1));
  return sorted[index];
}

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--seconds" && has_value) {
      options->seconds = std::stod(argv[++i]);
    } else if (arg == "--connections" && has_value) {
      options->connections = std::stoi(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      options->threads = std::stoi(argv[++i]);
    } else if (arg == "--server-threads" && has_value) {
      options->server_threads = std::stoi(argv[++i]);
    } else if (arg == "--url" && has_value) {
      options->url = argv[++i];
    } else if (arg == "--data-dir" && has_value) {
      options->data_dir = argv[++i];
    } else if (arg == "--store" && has_value) {
      options->store = argv[++i];
    } else {
      std::cerr << "usage: api_create_bench [--seconds 10] [--connections 64] [--threads 2]\n"
                   "         [--server-threads 2] [--url http://127.0.0.1:PORT --data-dir DIR]\n"
                   "         [--store postgres://USER@HOST:PORT/DB]\n"
                   "Without --url, starts a server in this process on a temporary data directory\n"
                   "(and the store --store names: an empty PostgreSQL database, say).\n";
      return false;
    }
  }
  if (options->connections < options->threads || options->threads < 1 || options->seconds <= 0) {
    std::cerr << "need --threads >= 1, --connections >= --threads and --seconds > 0\n";
    return false;
  }
  if (!options->url.empty() && options->data_dir.empty()) {
    std::cerr << "--url needs --data-dir (to read the admin token)\n";
    return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, &options)) return 2;

  std::optional<testing::TempDir> temp;
  core::SystemClock clock;
  std::unique_ptr<server::Server> in_process;
  std::ostringstream server_log;
  Target target;
  std::string data_dir = options.data_dir;
  if (options.url.empty()) {
    temp.emplace();
    data_dir = temp->path().string();
    core::Result<catalog::Catalog> catalog = catalog::LoadBuiltInCatalog();
    if (!catalog.ok()) {
      std::cerr << catalog.status().ToString() << "\n";
      return 1;
    }
    server::ServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    server_options.data_dir = data_dir;
    server_options.store = options.store;
    server_options.threads = options.server_threads;
    core::Result<std::unique_ptr<server::Server>> started =
        server::Server::Start(server_options, std::move(*catalog), clock, server_log);
    if (!started.ok()) {
      std::cerr << started.status().ToString() << "\n";
      return 1;
    }
    in_process = std::move(*started);
    target.port = in_process->port();
    options.url = fmt::format("http://127.0.0.1:{}", target.port);
  } else {
    const size_t colon = options.url.rfind(':');
    target.port = static_cast<uint16_t>(std::stoi(options.url.substr(colon + 1)));
  }

  std::string admin_token;
  std::ifstream(std::filesystem::path(data_dir) / "admin-token") >> admin_token;
  core::Result<std::unique_ptr<net::HttpClient>> client = net::HttpClient::Create(options.url);
  if (!client.ok() || admin_token.empty()) {
    std::cerr << "cannot set up a client for " << options.url << " or read the admin token in "
              << data_dir << "\n";
    return 1;
  }
  const std::string user_name = fmt::format("bench{}", ::getpid());
  const std::string created_user =
      MustSend(**client, "POST", "/v1/users",
               fmt::format(R"({{"name":"{}","credits_micros":1000000000000}})", user_name),
               admin_token, 201);
  const std::string token(boost::json::parse(created_user).at("token").as_string());
  // Every create is a pod that waits: past the default quotas, on a server with or without nodes.
  const std::string user_id(boost::json::parse(created_user).at("user").at("id").as_string());
  MustSend(**client, "PUT", "/v1/users/" + user_id + "/quota",
           R"({"max_pods":1000000000,"max_pending_pods":1000000000})", admin_token, 200);
  const std::string body =
      R"({"image":"busybox","gpu_type":"RTX 4090","volume_gb":0,"queue":true})";
  const std::string request = fmt::format(
      "POST /v1/pods HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n"
      "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
      target.port, token, body.size(), body);
  const std::string metrics_before = MustSend(**client, "GET", "/metrics", "", "", 200);

  Shared shared;
  const auto start = SteadyClock::now();
  shared.window_end = start + std::chrono::duration_cast<SteadyClock::duration>(
                                  std::chrono::duration<double>(options.seconds));
  std::vector<ThreadResult> results(static_cast<size_t>(options.threads));
  std::vector<std::thread> threads;
  for (int i = 0; i < options.threads; ++i) {
    const int share =
        options.connections / options.threads + (i < options.connections % options.threads);
    threads.emplace_back(LoadThread, std::cref(target), share, std::cref(request), std::ref(shared),
                         std::ref(results[static_cast<size_t>(i)]));
  }
  // Creates completed in each second: a throughput that falls as pending pods pile up shows here.
  std::vector<uint64_t> per_second;
  uint64_t last = 0;
  for (auto tick = start + std::chrono::seconds(1); tick <= shared.window_end;
       tick += std::chrono::seconds(1)) {
    std::this_thread::sleep_until(tick);
    const uint64_t now = shared.created.load();
    per_second.push_back(now - last);
    last = now;
  }
  std::this_thread::sleep_until(shared.window_end);
  shared.stop = true;
  for (std::thread& thread : threads) thread.join();

  std::vector<uint32_t> latencies;
  uint64_t created = 0, failed = 0;
  std::string first_failure;
  for (ThreadResult& result : results) {
    latencies.insert(latencies.end(), result.latencies_us.begin(), result.latencies_us.end());
    created += result.created;
    failed += result.failed;
    if (first_failure.empty()) first_failure = result.first_failure;
  }
  std::sort(latencies.begin(), latencies.end());
  const std::string metrics_after = MustSend(**client, "GET", "/metrics", "", "", 200);
  const double transactions = Counter(metrics_after, "suanli_store_transactions_total") -
                              Counter(metrics_before, "suanli_store_transactions_total");
  const double batches = Counter(metrics_after, "suanli_store_batches_total") -
                         Counter(metrics_before, "suanli_store_batches_total");

  fmt::print("server: {} ({})\n", in_process ? "in process" : options.url, data_dir);
  fmt::print("load: {} connections on {} threads for {} s, one request in flight per connection\n",
             options.connections, options.threads, options.seconds);
  fmt::print("created: {} pods ({:.0f}/s), failed: {}\n", created,
             static_cast<double>(created) / options.seconds, failed);
  if (!first_failure.empty()) fmt::print("first failure: {}\n", first_failure);
  fmt::print("latency (ms): p50 {:.2f}  p99 {:.2f}  p99.9 {:.2f}  max {:.2f}\n",
             Percentile(latencies, 0.5) / 1000.0, Percentile(latencies, 0.99) / 1000.0,
             Percentile(latencies, 0.999) / 1000.0,
             latencies.empty() ? 0.0 : latencies.back() / 1000.0);
  fmt::print("store: {:.0f} transactions for {:.0f} batches ({:.1f} batches per fsync)\n",
             transactions, batches, transactions > 0 ? batches / transactions : 0.0);
  fmt::print("pending pods at the end: {:.0f}\n",
             Counter(metrics_after, "suanli_scheduler_pending"));
  std::string series;
  for (uint64_t count : per_second) series += fmt::format(" {}", count);
  fmt::print("creates per second of the run:{}\n", series);
  if (in_process) in_process->Stop();
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace suanli::bench

int main(int argc, char** argv) { return suanli::bench::Main(argc, argv); }
