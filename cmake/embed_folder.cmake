# Writes OUT, a C++ file defining `std::span<const suanli::core::EmbeddedFile> NS::VAR()`: each of
# FILES (paths under DIR, separated by commas) with its path and bytes, in the order given.
include("${CMAKE_CURRENT_LIST_DIR}/embed_bytes.cmake")
string(REPLACE "," ";" files "${FILES}")
list(LENGTH files count)
set(arrays "")
set(entries "")
set(index 0)
foreach(path IN LISTS files)
  suanli_embed_bytes("${DIR}/${path}" bytes size)
  string(APPEND arrays "constexpr char kFile${index}[] = {${bytes}};\n")
  string(APPEND entries "    {\"${path}\", {kFile${index}, ${size}}},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${OUT}" "// Generated from ${DIR} by cmake/embed_folder.cmake; do not edit.\n"
  "#include <array>\n"
  "#include <span>\n"
  "\n"
  "#include \"core/embedded_file.h\"\n"
  "namespace ${NS} {\n"
  "namespace {\n"
  "${arrays}"
  "constexpr std::array<::suanli::core::EmbeddedFile, ${count}> kFiles = {{\n"
  "${entries}"
  "}};\n"
  "}  // namespace\n"
  "std::span<const ::suanli::core::EmbeddedFile> ${VAR}() { return kFiles; }\n"
  "}  // namespace ${NS}\n")
