// TextTable: columns aligned for a terminal, numbers to the right, text to the left.
#pragma once

#include <string>
#include <vector>

namespace suanli::cli {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  void AddColumn(std::string header, Align align) {
    columns_.push_back({std::move(header), align});
  }
  // REQUIRES: one cell per column.
  void AddRow(std::vector<std::string> cells);

  // Two spaces between columns, no trailing spaces, a newline after every line.
  std::string Render() const;

 private:
  struct Column {
    std::string header;
    Align align;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace suanli::cli
