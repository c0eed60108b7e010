#include "cli/text_table.h"

#include <gtest/gtest.h>

#include "cli/gpu_columns.h"

namespace suanli::cli {
namespace {

TEST(TextTableTest, AlignsTextLeftAndNumbersRight) {
  TextTable table;
  table.AddColumn("GPU", TextTable::Align::kLeft);
  table.AddColumn("VRAM", TextTable::Align::kRight);
  table.AddRow({"RTX 4090", "24"});
  table.AddRow({"A100 80GB SXM", "80 (3.33×)"});
  EXPECT_EQ(table.Render(),
            "GPU                  VRAM\n"
            "RTX 4090               24\n"
            "A100 80GB SXM  80 (3.33×)\n");
}

TEST(TextTableDeathTest, ARowWithTheWrongNumberOfCellsIsABug) {
  TextTable table;
  table.AddColumn("GPU", TextTable::Align::kLeft);
  EXPECT_DEATH(table.AddRow({"a", "b"}), "one cell per column");
}

TEST(GpuColumnsTest, FiguresReadAsDatasheetsPrintThem) {
  EXPECT_EQ(FormatFigure(1008), "1008");
  EXPECT_EQ(FormatFigure(82.58), "82.6");
  EXPECT_EQ(FormatFigure(24), "24");
  EXPECT_EQ(FormatFigure(8.1), "8.1");
  EXPECT_EQ(FormatFigure(0.74), "0.74");
}

TEST(GpuColumnsTest, FindsColumnsByKeyJsonFieldOrCommonWord) {
  EXPECT_EQ(FindGpuColumn("vram")->json, "memory_gb");
  EXPECT_EQ(FindGpuColumn("memory_gb")->key, "vram");
  EXPECT_EQ(FindGpuColumn("Price")->key, "rent");
  EXPECT_EQ(FindGpuColumn("tflops-per-dollar")->key, "tflops_per_dollar");
  EXPECT_EQ(FindGpuColumn("speed"), nullptr);
}

}  // namespace
}  // namespace suanli::cli
