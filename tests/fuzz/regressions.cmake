# unit_fuzz_regressions: every fuzz harness compiled without libFuzzer (BERTH_FUZZ_REPLAY) and run
# over its whole seed corpus, regression inputs included, plus a test per fixed finding; part of
# the normal build and of ctest's unit label, so a crash the fuzzers found stays fixed everywhere.
include(${CMAKE_CURRENT_LIST_DIR}/harnesses.cmake)

add_executable(unit_fuzz_regressions ${PROJECT_SOURCE_DIR}/tests/unit/fuzz_regressions_test.cc)
foreach(name IN LISTS BERTH_FUZZ_HARNESSES)
  berth_fuzz_harness(unit_fuzz_regressions ${name})
endforeach()
target_include_directories(unit_fuzz_regressions PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz)
target_compile_definitions(unit_fuzz_regressions PRIVATE BERTH_FUZZ_REPLAY
                                                        BERTH_FUZZ_CORPUS="${PROJECT_SOURCE_DIR}/tests/fuzz/corpus")
target_link_libraries(unit_fuzz_regressions PRIVATE GTest::gtest_main)
gtest_discover_tests(unit_fuzz_regressions PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
