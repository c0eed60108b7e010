# Helpers shared by the module CMakeLists.

# suanli_test(NAME SOURCES... LIBS lib...): one GoogleTest binary whose tests ctest lists one by one,
# labelled with their folder (`ctest -L server`; the end-to-end tests in tests/ are `e2e`).
function(suanli_test name)
  cmake_parse_arguments(ARG "POSTGRES" "" "SOURCES;LIBS" ${ARGN})
  if(NOT SUANLI_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main)
  suanli_test_label(label)
  # For suanli_label_targets: a flavour that runs only some labels builds only their tests.
  set_property(GLOBAL APPEND PROPERTY SUANLI_TEST_LABELS ${label})
  set_property(GLOBAL APPEND PROPERTY SUANLI_TESTS_${label} ${name})
  set(fixtures "")
  if(ARG_POSTGRES)
    # Its tests need the throwaway PostgreSQL cluster that the `postgres` fixture starts.
    set(fixtures postgres)
    target_compile_definitions(${name} PRIVATE
                               SUANLI_TEST_POSTGRES_DIR="${SUANLI_TEST_POSTGRES_DIR}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "SUANLI_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                                  LABELS ${label} FIXTURES_REQUIRED "${fixtures}")
endfunction()

# The `postgres` fixture: a throwaway PostgreSQL cluster (scripts/postgres.sh) that ctest starts
# before the first test that needs it and stops after the last, in a folder of /tmp named after
# the build, so that two builds' tests never share one (and the `postgres` user can reach it).
function(suanli_postgres_fixture)
  if(NOT SUANLI_BUILD_TESTS)
    return()
  endif()
  add_test(NAME postgres_start
           COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/postgres.sh" start "${SUANLI_TEST_POSTGRES_DIR}")
  set_tests_properties(postgres_start PROPERTIES FIXTURES_SETUP postgres LABELS store)
  add_test(NAME postgres_stop
           COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/postgres.sh" stop "${SUANLI_TEST_POSTGRES_DIR}")
  set_tests_properties(postgres_stop PROPERTIES FIXTURES_CLEANUP postgres LABELS store)
endfunction()

# suanli_test_label(VAR): the ctest label of the tests defined in the current folder: the module's
# name under src/ (core, server, store, agent, ...), or `e2e` for tests/.
function(suanli_test_label var)
  get_filename_component(folder "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(folder STREQUAL "tests")
    set(folder e2e)
  endif()
  set(${var} ${folder} PARENT_SCOPE)
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
            "${PROJECT_SOURCE_DIR}/cmake/embed_bytes.cmake"
    COMMENT "Embedding ${file}")
  target_sources(${target} PRIVATE "${out}")
endfunction()

# suanli_embed_folder(TARGET VAR DIR PATTERN NAMESPACE): compiles every file under DIR (subfolders
# included) whose name matches the glob PATTERN (*.js) into TARGET as
# `std::span<const suanli::core::EmbeddedFile> NAMESPACE::VAR()`, each with its path under DIR
# ("pages/pods.js"), sorted. The glob is CONFIGURE_DEPENDS, so a file added or removed reconfigures
# the build; a file changed is embedded again. Paths may not hold commas (the list's separator on
# the script's command line).
function(suanli_embed_folder target var dir pattern namespace)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE "${dir}" "${dir}/${pattern}")
  list(SORT files)
  list(TRANSFORM files PREPEND "${dir}/" OUTPUT_VARIABLE inputs)
  string(REPLACE ";" "," joined "${files}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_${var}.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} "-DFILES=${joined}" -DOUT=${out} -DVAR=${var}
            -DNS=${namespace} -P "${PROJECT_SOURCE_DIR}/cmake/embed_folder.cmake"
    DEPENDS ${inputs} "${PROJECT_SOURCE_DIR}/cmake/embed_folder.cmake"
            "${PROJECT_SOURCE_DIR}/cmake/embed_bytes.cmake"
    COMMENT "Embedding ${dir}/**/${pattern}")
  target_sources(${target} PRIVATE "${out}")
endfunction()

# suanli_label_targets(): a target `tests_<label>` for each test label, building that label's test
# binaries and what their tests run (`suanli` for every label: the process and end-to-end tests run
# it). The TSan flavour runs five labels and builds only theirs (scripts/test.sh).
function(suanli_label_targets)
  get_property(labels GLOBAL PROPERTY SUANLI_TEST_LABELS)
  list(REMOVE_DUPLICATES labels)
  foreach(label IN LISTS labels)
    get_property(binaries GLOBAL PROPERTY SUANLI_TESTS_${label})
    add_custom_target(tests_${label} DEPENDS ${binaries} suanli)
  endforeach()
endfunction()
