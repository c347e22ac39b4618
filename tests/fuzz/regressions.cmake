# fuzz_regression_test: every fuzz harness compiled without libFuzzer (BERTH_FUZZ_REPLAY) and run
# over its whole seed corpus, regression inputs included, plus a test per fixed finding; part of
# the normal build and of ctest's unit label, so a crash the fuzzers found stays fixed everywhere.
include(${CMAKE_CURRENT_LIST_DIR}/harnesses.cmake)

add_executable(fuzz_regression_test ${PROJECT_SOURCE_DIR}/tests/unit/fuzz_regression_test.cc)
foreach(name IN LISTS BERTH_FUZZ_HARNESSES)
  berth_fuzz_harness(fuzz_regression_test ${name})
endforeach()
target_include_directories(fuzz_regression_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz)
target_compile_definitions(fuzz_regression_test PRIVATE BERTH_FUZZ_REPLAY
                                                        BERTH_FUZZ_CORPUS="${PROJECT_SOURCE_DIR}/tests/fuzz/corpus")
target_link_libraries(fuzz_regression_test PRIVATE GTest::gtest_main)
gtest_discover_tests(fuzz_regression_test PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
