// libpq, PostgreSQL's own C client library, behind RAII handles: the PostgreSQL store's
// (postgres_store.cc) one way to talk to the server, and its tests'.
//
// Why libpq and not libpqxx (also in Debian): the store needs a handful of calls (connect, a
// parameterized query, the error's SQLSTATE), the same shape as sqlite.h over SQLite's C API;
// libpqxx would add a second exception-based API to keep out of the rest of the code.
//
// Thread-safety: none of its own; a Connection has one user at a time.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace suanli::store::pg {

struct ResultClearer {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultHandle = std::unique_ptr<PGresult, ResultClearer>;

// A query's parameters, in libpq's text format (nullopt is SQL NULL).
using Params = std::vector<std::optional<std::string>>;

// One libpq connection. Movable, not copyable.
class Connection {
 public:
  // Connects to `url` (postgres://user:password@host:port/database?options, or libpq's key=value
  // form). UNAVAILABLE "cannot connect to PostgreSQL at <url without password>: <libpq's reason>".
  static core::Result<Connection> Open(const std::string& url);

  // Runs `sql` with `params` ($1, $2, ...; without any, `sql` may be several statements, and the
  // last one's rows are returned) and returns its rows, or the error as a Status: the
  // caller's data (a duplicate key, a value that is not valid: SQLSTATE classes 22 and 23)
  // INVALID_ARGUMENT; the server or the link going away (classes 08, 53, 57, 58 and a lost
  // connection) UNAVAILABLE; the rest INTERNAL. `what` starts the message ("cannot write ...").
  core::Result<ResultHandle> Exec(const std::string& sql, const Params& params,
                                  std::string_view what);
  core::Result<ResultHandle> Exec(const std::string& sql, std::string_view what) {
    return Exec(sql, {}, what);
  }

  // Connects again if the link was lost (PostgreSQL restarted): for connections whose session holds
  // nothing, like the store's reader. Its later Exec calls fail as before when that fails.
  void ReconnectIfLost();

  // The text of `url` without its password, for messages.
  const std::string& where() const { return where_; }

 private:
  struct Finisher {
    void operator()(PGconn* connection) const { PQfinish(connection); }
  };
  Connection(std::unique_ptr<PGconn, Finisher> connection, std::string where)
      : connection_(std::move(connection)), where_(std::move(where)) {}

  std::unique_ptr<PGconn, Finisher> connection_;
  std::string where_;
};

// The text of row `row`, column `column` ("" for NULL).
std::string Text(const PGresult* result, int row, int column);
int64_t Integer(const PGresult* result, int row, int column);

// A PostgreSQL array literal of `values` ({"a","b\"c"}): how a whole column of rows travels as one
// parameter (INSERT ... SELECT * FROM unnest($1::text[], ...)), one statement for many rows.
std::string ArrayLiteral(const std::vector<std::string>& values);
std::string ArrayLiteral(const std::vector<int64_t>& values);

// `url` with any password replaced by "***".
std::string WithoutPassword(std::string_view url);

}  // namespace suanli::store::pg
