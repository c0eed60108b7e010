// suanli: one binary, many subcommands (see cli/cli.cc for the table of them).
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return suanli::cli::RunCli(args, std::cout, std::cerr);
}
