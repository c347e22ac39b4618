# The libFuzzer build (BERTH_FUZZ=ON, clang only; scripts/fuzz drives it): every object is compiled
# with coverage feedback, ASan and UBSan, and UBSan aborts, so any report stops the fuzzer with
# the input saved. In a build dir of its own (scripts/fuzz's default) only the tests/fuzz targets
# are meant to be built; in the whole-tree ASan build (BERTH_SANITIZE=address,undefined) everything.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "BERTH_FUZZ needs clang: configure with -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
endif()
# The optimisation comes after lean_deps' -Os and wins. -O1 fuzzes about twice as fast as -O0 and
# keeps stack traces close to the source; -O0 builds in less than half the time (the instrumented
# Beast code dominates). Line tables are all the symbolizer needs.
set(BERTH_FUZZ_OPT -O1 CACHE STRING "Optimisation flag of the fuzz build (-O1, or -O0 to build faster)")
if(BERTH_SANITIZE STREQUAL "address,undefined")
  # The ASan stage's build (scripts/test): every object already has ASan and UBSan, so coverage
  # feedback is all the fuzz targets add, and the fuzz stage builds nothing of its own. Outside a
  # fuzzer the coverage hooks are the sanitizer runtime's empty defaults.
  add_compile_options(-fsanitize=fuzzer-no-link)
else()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer ${BERTH_FUZZ_OPT} -gline-tables-only)
  add_link_options(-fsanitize=address,undefined)
endif()
