// A database of its own for each test, on the throwaway PostgreSQL cluster that ctest's `postgres`
// fixture starts (scripts/postgres.sh; its folder is compiled in as SUANLI_TEST_POSTGRES_DIR by
// suanli_test(... POSTGRES), or comes from the environment). A test without
// the cluster fails saying so: the tests' command starts one, so a missing cluster is a fault, not
// a reason to skip.
//
// Test-only; nothing in the server includes this.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

#include "store/postgres.h"

namespace suanli::store::testing {

class PostgresDatabase {
 public:
  PostgresDatabase() {
#ifdef SUANLI_TEST_POSTGRES_DIR
    const char* dir = SUANLI_TEST_POSTGRES_DIR;
#else
    const char* dir = std::getenv("SUANLI_TEST_POSTGRES_DIR");
#endif
    if (dir == nullptr) {
      error_ =
          "no PostgreSQL test cluster: run the test through ctest, whose postgres fixture "
          "starts it (scripts/postgres.sh)";
      return;
    }
    std::ifstream file(std::string(dir) + "/url");
    std::getline(file, admin_url_);
    if (admin_url_.empty()) {
      error_ = std::string("no PostgreSQL cluster at ") + dir + " (scripts/postgres.sh start " +
               dir + " starts one)";
      return;
    }
    static std::atomic<int> counter{0};
    name_ = "suanli_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
    url_ = admin_url_.substr(0, admin_url_.rfind('/') + 1) + name_;
    core::Result<pg::Connection> admin = pg::Connection::Open(admin_url_);
    if (!admin.ok()) {
      error_ = admin.status().ToString();
      return;
    }
    core::Result<pg::ResultHandle> created =
        admin->Exec("CREATE DATABASE " + name_, "cannot create the test database");
    if (!created.ok()) error_ = created.status().ToString();
  }

  PostgresDatabase(const PostgresDatabase&) = delete;
  PostgresDatabase& operator=(const PostgresDatabase&) = delete;

  ~PostgresDatabase() {
    if (name_.empty()) return;
    core::Result<pg::Connection> admin = pg::Connection::Open(admin_url_);
    if (admin.ok()) (void)admin->Exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)", "");
  }

  // "" when the database is there; else why not.
  const std::string& error() const { return error_; }
  const std::string& url() const { return url_; }

 private:
  std::string admin_url_;
  std::string name_;
  std::string url_;
  std::string error_;
};

}  // namespace suanli::store::testing
