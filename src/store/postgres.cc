#include "store/postgres.h"

#include <cstdlib>

namespace suanli::store::pg {
namespace {

std::string Trimmed(const char* text) {
  std::string out = text == nullptr ? "" : text;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

core::Status ErrorOf(const PGresult* result, PGconn* connection, std::string message) {
  if (result == nullptr || PQstatus(connection) != CONNECTION_OK) {
    return core::UnavailableError(message + ": the connection to PostgreSQL was lost (" +
                                  Trimmed(PQerrorMessage(connection)) + ")");
  }
  const std::string state = Trimmed(PQresultErrorField(result, PG_DIAG_SQLSTATE));
  message += ": " + Trimmed(PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY));
  if (const char* detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL)) {
    message += " (" + Trimmed(detail) + ")";
  }
  const std::string kind = state.substr(0, 2);
  if (kind == "22" || kind == "23") return core::InvalidArgumentError(std::move(message));
  if (kind == "08" || kind == "53" || kind == "57" || kind == "58" || kind == "40") {
    return core::UnavailableError(std::move(message));
  }
  return core::InternalError(std::move(message) + " [SQLSTATE " + state + "]");
}

}  // namespace

std::string WithoutPassword(std::string_view url) {
  // postgres://user:password@host/...: the password is between the first ':' after the scheme and
  // the '@'.
  const size_t scheme = url.find("://");
  const size_t at = url.find('@');
  if (scheme == std::string_view::npos || at == std::string_view::npos) return std::string(url);
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

core::Result<Connection> Connection::Open(const std::string& url) {
  std::unique_ptr<PGconn, Finisher> connection(PQconnectdb(url.c_str()));
  const std::string where = WithoutPassword(url);
  if (connection == nullptr) {
    return core::UnavailableError("cannot connect to PostgreSQL at " + where + ": out of memory");
  }
  if (PQstatus(connection.get()) != CONNECTION_OK) {
    return core::UnavailableError("cannot connect to PostgreSQL at " + where + ": " +
                                  Trimmed(PQerrorMessage(connection.get())));
  }
  // NOTICEs ("relation ... already exists, skipping") are for people at psql, not our logs.
  PQsetNoticeProcessor(
      connection.get(), [](void*, const char*) {}, nullptr);
  return Connection(std::move(connection), where);
}

core::Result<ResultHandle> Connection::Exec(const std::string& sql, const Params& params,
                                            std::string_view what) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::optional<std::string>& param : params) {
    values.push_back(param ? param->c_str() : nullptr);
  }
  // Without parameters, the simple protocol, which also runs several statements (a migration).
  ResultHandle result(values.empty() ? PQexec(connection_.get(), sql.c_str())
                                     : PQexecParams(connection_.get(), sql.c_str(),
                                                    static_cast<int>(values.size()), nullptr,
                                                    values.data(), nullptr, nullptr, 0));
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return ErrorOf(result.get(), connection_.get(), std::string(what));
}

void Connection::ReconnectIfLost() {
  if (PQstatus(connection_.get()) != CONNECTION_OK) PQreset(connection_.get());
}

std::string Text(const PGresult* result, int row, int column) {
  if (PQgetisnull(result, row, column)) return "";
  return std::string(PQgetvalue(result, row, column),
                     static_cast<size_t>(PQgetlength(result, row, column)));
}

int64_t Integer(const PGresult* result, int row, int column) {
  return std::strtoll(PQgetvalue(result, row, column), nullptr, 10);
}

std::string ArrayLiteral(const std::vector<std::string>& values) {
  std::string out = "{";
  for (const std::string& value : values) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : value) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string ArrayLiteral(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (int64_t value : values) {
    if (out.size() > 1) out += ',';
    out += std::to_string(value);
  }
  return out + "}";
}

}  // namespace suanli::store::pg
