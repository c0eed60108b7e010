# Writes OUT, a C++ file defining `std::string_view NS::VAR()` that returns the bytes of IN.
include("${CMAKE_CURRENT_LIST_DIR}/embed_bytes.cmake")
suanli_embed_bytes("${IN}" bytes size)
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/embed_file.cmake; do not edit.\n"
  "#include <string_view>\n"
  "namespace ${NS} {\n"
  "std::string_view ${VAR}() {\n"
  "  static constexpr char kBytes[] = {${bytes}};\n"
  "  return {kBytes, ${size}};\n"
  "}\n"
  "}  // namespace ${NS}\n")
