// A database of its own for each test, on the throwaway PostgreSQL cluster that ctest's `postgres`
// fixture starts (scripts/postgres.sh; its folder is compiled in as SUANLI_TEST_POSTGRES_DIR by
// suanli_test(... POSTGRES), or comes from the environment). A test without
// the cluster fails saying so: the tests' command starts one, so a missing cluster is a fault, not
// a reason to skip.
//
// Test-only; nothing in the server includes this.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/postgres.h"
#include "store/store.h"

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

// The store of a test that runs on both stores (a ::testing::TestWithParam<std::string> whose
// suite is instantiated with SUANLI_INSTANTIATE_ON_BOTH_STORES): "sqlite", a file; "postgres", a
// database of its own on the test cluster. Open may be called again after the last store opened
// is destroyed (a restart of the server).
class StoreUnderTest {
 public:
  StoreUnderTest(std::string_view kind, std::filesystem::path sqlite_file)
      : sqlite_file_(std::move(sqlite_file)) {
    if (kind == "postgres") database_.emplace();
  }

  // "" when the store can be opened; else why not.
  std::string error() const { return database_ ? database_->error() : ""; }

  core::Result<std::unique_ptr<Store>> Open() const {
    return database_ ? OpenPostgresStore(database_->url()) : OpenSqliteStore(sqlite_file_);
  }

 private:
  std::filesystem::path sqlite_file_;
  std::optional<PostgresDatabase> database_;
};

// Names each instance of a suite after its store ("Stores/Suite.Test/sqlite").
inline std::string StoreName(const ::testing::TestParamInfo<std::string>& store) {
  return store.param;
}

}  // namespace suanli::store::testing

// Instantiates the parameterised suite `suite` on SQLite and on PostgreSQL.
#define SUANLI_INSTANTIATE_ON_BOTH_STORES(suite)                                   \
  INSTANTIATE_TEST_SUITE_P(Stores, suite, ::testing::Values("sqlite", "postgres"), \
                           ::suanli::store::testing::StoreName)

// Instantiates `suite` on SQLite only: for rules that hold whatever the store (what a restart must
// find again runs on both, SUANLI_INSTANTIATE_ON_BOTH_STORES). Keeps the pyramid's upper floors
// thin.
#define SUANLI_INSTANTIATE_ON_SQLITE(suite)                            \
  INSTANTIATE_TEST_SUITE_P(Stores, suite, ::testing::Values("sqlite"), \
                           ::suanli::store::testing::StoreName)
