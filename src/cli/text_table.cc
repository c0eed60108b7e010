#include "cli/text_table.h"

#include <algorithm>

#include "core/check.h"

namespace suanli::cli {
namespace {

// Display width of UTF-8 text: count the bytes that start a code point (our cells hold "×" and
// "—").
size_t DisplayWidth(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

void TextTable::AddRow(std::vector<std::string> cells) {
  SUANLI_CHECK(cells.size() == columns_.size(), "a table row needs one cell per column");
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths;
  for (const Column& column : columns_) widths.push_back(DisplayWidth(column.header));
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  std::string text;
  auto render_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string padding(widths[i] - DisplayWidth(cells[i]), ' ');
      if (i > 0) line += "  ";
      line += columns_[i].align == Align::kRight ? padding + cells[i] : cells[i] + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  };
  std::vector<std::string> headers;
  for (const Column& column : columns_) headers.push_back(column.header);
  render_line(headers);
  for (const auto& row : rows_) render_line(row);
  return text;
}

}  // namespace suanli::cli
