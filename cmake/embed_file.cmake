# Writes OUT, a C++ file defining `std::string_view NS::VAR()` that returns the bytes of IN.
# The bytes go in a char array, not a string literal: literals over 64 KiB trip -Woverlength-strings
# (the vendored chart library is 200 KiB), and an array holds any byte without escaping rules.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
if(size EQUAL 0)
  set(bytes "'\\0'")
else()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
endif()
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/embed_file.cmake; do not edit.\n"
  "#include <string_view>\n"
  "namespace ${NS} {\n"
  "std::string_view ${VAR}() {\n"
  "  static constexpr char kBytes[] = {${bytes}};\n"
  "  return {kBytes, ${size}};\n"
  "}\n"
  "}  // namespace ${NS}\n")
