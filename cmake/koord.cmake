# Helpers that turn the directory layout into targets.

# koord_module(NAME [DEPS...]): src/NAME/**/*.c as a static library "NAME" (a module may keep
# one subdirectory per part, e.g. src/manager/nodeslo/; it is still one library and one prefix).
function(koord_module name)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${name}/*.c)
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  if(ARGN)
    target_link_libraries(${name} PUBLIC ${ARGN})
  endif()
endfunction()

# One cmocka executable per tests/<module>/test_<file>.c, CTest name <module>.<file>, label unit.
# KOORD_TEST_TIMEOUT_MULTIPLIER scales timeouts (valgrind runs). KOORD_TEST_LIBS_<module> lists
# extra libraries a module's tests link (e.g. the API server the kube client is tested against).
function(koord_unit_tests)
  set(mult $ENV{KOORD_TEST_TIMEOUT_MULTIPLIER})
  if(NOT mult)
    set(mult 1)
  endif()
  foreach(module ${ARGN})
    file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${module}/test_*.c)
    foreach(t ${tests})
      get_filename_component(base ${t} NAME_WE)
      string(REGEX REPLACE "^test_" "" file ${base})
      set(exe test_${module}_${file})
      add_executable(${exe} ${t})
      target_include_directories(${exe} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests)
      target_link_libraries(${exe} PRIVATE ${module} ${KOORD_TEST_LIBS_${module}} PkgConfig::CMOCKA)
      target_compile_definitions(${exe} PRIVATE KOORD_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
      add_test(NAME ${module}.${file} COMMAND ${exe})
      # Generous: valgrind runs these on a loaded 2-core CI machine (apiserver.aggregator takes
      # ~120 s alone, its TLS handshakes being slow under valgrind).
      math(EXPR tmo "420 * ${mult}")
      set_tests_properties(${module}.${file} PROPERTIES LABELS unit TIMEOUT ${tmo}
        ENVIRONMENT "KOORD_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
    endforeach()
  endforeach()
endfunction()

# tests/e2e/test_*.sh run the real koord binary; label e2e. Exit status 77 is a skip (lib.sh
# skip()), reported by CTest as "Not Run" rather than as a pass.
function(koord_e2e_tests)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/e2e/test_*.sh)
  foreach(t ${tests})
    get_filename_component(base ${t} NAME_WE)
    string(REGEX REPLACE "^test_" "" name ${base})
    add_test(NAME e2e.${name} COMMAND bash ${t})
    set_tests_properties(e2e.${name} PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77
      ENVIRONMENT "KOORD=$<TARGET_FILE:koord>;KOORD_SOURCE_DIR=${CMAKE_SOURCE_DIR};KOORD_TEST_WEBHOOK=$<TARGET_FILE:koord_test_webhook>;KOORD_TEST_SIM_REPORT=$<TARGET_FILE:koord_test_sim_report>")
  endforeach()
endfunction()

# bench/<name>/*.c -> bench_<name>; not tests: `make bench` runs them. They are built with
# everything else so they cannot rot; a benchmark that drives the koord binary finds it
# through KOORD_BINARY (and the `benches` target builds it too). bench/common/ is not a
# benchmark: the library of what they share (servers under test, client, figures).
function(koord_bench)
  file(GLOB common CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bench/common/*.c)
  add_library(bench_common STATIC ${common})
  target_include_directories(bench_common PUBLIC ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/bench)
  target_link_libraries(bench_common PUBLIC codec base PkgConfig::CURL PkgConfig::GNUTLS
                        Threads::Threads)
  target_compile_definitions(bench_common PRIVATE KOORD_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  file(GLOB dirs LIST_DIRECTORIES true ${CMAKE_SOURCE_DIR}/bench/*)
  foreach(d ${dirs})
    get_filename_component(name ${d} NAME)
    if(IS_DIRECTORY ${d} AND NOT name STREQUAL "common")
      file(GLOB srcs CONFIGURE_DEPENDS ${d}/*.c)
      if(srcs)
        add_executable(bench_${name} ${srcs})
        target_link_libraries(bench_${name} PRIVATE bench_common apiserver slo api codec base
          PkgConfig::CURL Threads::Threads)
        target_compile_definitions(bench_${name} PRIVATE KOORD_BINARY="$<TARGET_FILE:koord>"
          KOORD_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
        add_dependencies(bench_${name} koord)
        list(APPEND all bench_${name})
      endif()
    endif()
  endforeach()
  add_custom_target(benches DEPENDS ${all})
  # bench/scheduler also runs the scheduling cycle in process (src/sched).
  if(TARGET bench_scheduler)
    target_link_libraries(bench_scheduler PRIVATE sched kube)
  endif()
  # Tiny counts, koord only: proves the benchmark still runs (no timings are checked).
  if(TARGET bench_apiserver)
    add_test(NAME bench.apiserver_smoke COMMAND bench_apiserver --smoke --no-etcd)
    set_tests_properties(bench.apiserver_smoke PROPERTIES LABELS e2e TIMEOUT 120)
  endif()
  if(TARGET bench_agent)
    add_test(NAME bench.agent_smoke COMMAND bench_agent --smoke)
    set_tests_properties(bench.agent_smoke PROPERTIES LABELS e2e TIMEOUT 120)
  endif()
  if(TARGET bench_nodemetric)
    add_test(NAME bench.nodemetric_smoke COMMAND bench_nodemetric --smoke)
    set_tests_properties(bench.nodemetric_smoke PROPERTIES LABELS e2e TIMEOUT 120)
  endif()
  if(TARGET bench_conns)
    add_test(NAME bench.conns_smoke COMMAND bench_conns --smoke)
    set_tests_properties(bench.conns_smoke PROPERTIES LABELS e2e TIMEOUT 180)
  endif()
  if(TARGET bench_scheduler)
    add_test(NAME bench.scheduler_smoke COMMAND bench_scheduler --smoke)
    set_tests_properties(bench.scheduler_smoke PROPERTIES LABELS e2e TIMEOUT 180)
  endif()
endfunction()

# fuzz/fuzz_<name>.c -> fuzz_<name> with -fsanitize=fuzzer.
function(koord_fuzz_targets)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/fuzz/fuzz_*.c)
  foreach(s ${srcs})
    get_filename_component(name ${s} NAME_WE)
    add_executable(${name} ${s})
    target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE slo api codec base)
  endforeach()
endfunction()

# The web module's generated source (src/web/web.h): web/ui/* and web/report/* as ui/... and
# report/..., and uPlot's dist files and licence from web/node_modules as uplot/...
# (cmake/embed.cmake).
# node_modules is not in git: `make deps` runs npm ci; without it, configuring stops here.
function(koord_web_assets)
  set(web ${CMAKE_SOURCE_DIR}/web)
  set(uplot ${web}/node_modules/uplot/dist)
  if(NOT EXISTS ${uplot}/uPlot.iife.min.js)
    message(FATAL_ERROR "${uplot}/uPlot.iife.min.js is missing: web/node_modules is installed "
                        "by `make deps` (npm ci in web/)")
  endif()
  file(GLOB_RECURSE own CONFIGURE_DEPENDS RELATIVE ${web} ${web}/ui/* ${web}/report/*)
  set(pairs "")
  set(deps "")
  foreach(f ${own})
    list(APPEND pairs "${f}=${web}/${f}")
    list(APPEND deps ${web}/${f})
  endforeach()
  foreach(f uPlot.iife.min.js uPlot.min.css)
    list(APPEND pairs "uplot/${f}=${uplot}/${f}")
    list(APPEND deps ${uplot}/${f})
  endforeach()
  # uPlot is MIT: its licence travels with the copy in the binary (served at /ui/uplot/LICENSE).
  list(APPEND pairs "uplot/LICENSE=${web}/node_modules/uplot/LICENSE")
  list(APPEND deps ${web}/node_modules/uplot/LICENSE)
  set(out ${CMAKE_BINARY_DIR}/generated/web_assets.c)
  string(REPLACE ";" "|" pairs_arg "${pairs}")
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} "-DFILES=${pairs_arg}" -P ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${deps} ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "Embedding web assets" VERBATIM)
  target_sources(web PRIVATE ${out})
endfunction()
