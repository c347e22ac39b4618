# Build time of the code that only tests berth. Two precompiled headers (GCC builds: the plain
# build and the package's): berth_pch for berth's own libraries and programs, berth_test_pch for
# the tests and their harness. Unity batches already parse each header once per batch; what they
# cannot share across the ~90 batches of ~40 targets is the header text itself: the generated CRI
# messages and stubs, gRPC, GoogleTest and nlohmann's json took 10-11 s of a test batch's 20-35 s.
# Each is parsed once, into its header, and every target of the kind reuses that (REUSE_FROM), so
# the compile flags that GCC's precompiled headers depend on must be alike in all of them (they
# are: the project's options apply to every target; the programs built with -fno-exceptions or
# -fno-rtti, and the static C programs, do without).
# A header GCC cannot use is a -Winvalid-pch warning, an error in CI's build.
# Clang's sanitizer and fuzz builds do without: clang refuses a header built with other
# definitions on the command line, and those builds are not the one developers wait on.
option(BERTH_PCH "Precompile the heavy headers shared by every target (GCC builds)" ON)
set(BERTH_PCH_HEADERS
  <algorithm> <chrono> <functional> <map> <memory> <mutex> <optional> <set> <string> <thread> <vector>
  <nlohmann/json.hpp> <grpcpp/grpcpp.h> <gtest/gtest.h> <berth/cri_api.h>)
if(BERTH_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(BERTH_PCH_ON TRUE)
  # Definitions that the precompiled headers read and that would otherwise come with some targets'
  # dependencies only (GoogleTest's, gRPC's pkg-config flags): set for every target, so that GCC
  # finds them defined alike in the header's build and in each file that uses it.
  add_compile_definitions(GTEST_HAS_PTHREAD=1)
  add_compile_options(${GRPC_UNSECURE_CFLAGS_OTHER})
  file(WRITE ${CMAKE_BINARY_DIR}/berth_pch.cc "// The object of a target that owns one of berth's precompiled headers.\n")
  foreach(pch berth_pch berth_test_pch)
    add_library(${pch} STATIC ${CMAKE_BINARY_DIR}/berth_pch.cc)
    set_target_properties(${pch} PROPERTIES UNITY_BUILD OFF)
    target_link_libraries(${pch} PRIVATE berth_cri_api nlohmann_json::nlohmann_json GTest::gtest)
    target_precompile_headers(${pch} PRIVATE ${BERTH_PCH_HEADERS})
  endforeach()
  target_compile_options(berth_test_pch PRIVATE -O0)
else()
  set(BERTH_PCH_ON FALSE)
endif()

# berth_use_pch(<target>...): berth's libraries and programs start from berth_pch.
function(berth_use_pch)
  if(BERTH_PCH_ON)
    foreach(t IN LISTS ARGN)
      target_precompile_headers(${t} REUSE_FROM berth_pch)
    endforeach()
  endif()
endfunction()

# berth_test_code(<target>...): code that only tests berth (unit, component and e2e tests and
# their harness) is compiled without optimisation: it spends its time waiting on berthd, runc and
# the kernel, and at -Os its code generation took two thirds of its compile time (GoogleTest's
# assertions expand into large functions). What it tests, the libraries and programs, keeps the
# flags berth ships with; benchmark programs do too, as they measure.
function(berth_test_code)
  foreach(t IN LISTS ARGN)
    target_compile_options(${t} PRIVATE -O0)
    if(BERTH_PCH_ON)
      target_precompile_headers(${t} REUSE_FROM berth_test_pch)
    endif()
  endforeach()
endfunction()
