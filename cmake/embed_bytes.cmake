# suanli_embed_bytes(FILE BYTES_VAR SIZE_VAR): FILE's bytes as a C++ char initializer list
# ('\x2f','\x2f',...) and their count, for embed_file.cmake and embed_folder.cmake. The bytes go in
# a char array, not a string literal: literals over 64 KiB trip -Woverlength-strings (the vendored
# chart library is 200 KiB), and an array holds any byte without escaping rules.
function(suanli_embed_bytes file bytes_var size_var)
  file(READ "${file}" hex HEX)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  if(size EQUAL 0)
    set(bytes "'\\0'")
  else()
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
  endif()
  set(${bytes_var} "${bytes}" PARENT_SCOPE)
  set(${size_var} "${size}" PARENT_SCOPE)
endfunction()
