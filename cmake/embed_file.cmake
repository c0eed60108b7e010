# Writes OUT, a C++ file defining `std::string_view NS::VAR()` that returns the text of IN.
file(READ "${IN}" content)
string(FIND "${content}" ")suanli_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )suanli_embed\"")
endif()
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/embed_file.cmake; do not edit.\n"
  "#include <string_view>\n"
  "namespace ${NS} {\n"
  "std::string_view ${VAR}() {\n"
  "  static constexpr std::string_view kText = R\"suanli_embed(${content})suanli_embed\";\n"
  "  return kText;\n"
  "}\n"
  "}  // namespace ${NS}\n")
