# Helpers shared by the module CMakeLists.

# suanli_test(NAME SOURCES... LIBS lib...): one GoogleTest binary whose tests ctest lists one by one.
function(suanli_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT SUANLI_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "SUANLI_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# suanli_embed(TARGET VAR FILE NAMESPACE): compiles FILE's text into TARGET as
# `std::string_view NAMESPACE::VAR()`, so the binary carries its default data and runs from any folder.
function(suanli_embed target var file namespace)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_${var}.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DVAR=${var} -DNS=${namespace}
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake"
    DEPENDS "${file}" "${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake"
    COMMENT "Embedding ${file}")
  target_sources(${target} PRIVATE "${out}")
endfunction()
