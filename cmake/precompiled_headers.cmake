# Build time. Precompiled headers (GCC's plain and shipped builds, clang's sanitizer and fuzz
# builds), each parsed once and reused by every target of its kind (REUSE_FROM), so the compile
# flags that precompiled headers depend on must be alike in all of them (they are: the project's
# options apply to every target; the programs built with -fno-exceptions or -fno-rtti, and the
# static C programs, do without). Unity batches parse a header once per batch; these save the
# parse across the batches of many targets: the generated CRI code, gRPC, GoogleTest and
# nlohmann's json took 10-11 s of a test batch's 20-35 s.
# A header GCC cannot use is a -Winvalid-pch warning, an error in CI's build. Clang refuses (an
# error) only a macro the header was built with and the file defines otherwise; the definitions
# some targets alone have (BERTH_SOURCE_DIR, a helper's path) are not in the headers' own builds,
# so every target may use them. With clang the headers took an e2e test's unity file from 32.8 to
# 26.9 s (ASan + UBSan, one core).
option(BERTH_PCH "Precompile the heavy headers shared by every target" ON)
# GCC instantiates, at the end of every file, each template that an inline function of an included
# header uses, whether the file calls that function or not; a precompiled header saves the parsing,
# not that. So a header in a precompiled header costs every file that starts from it: an empty file
# took 5.8 s with the generated gRPC services, gRPC and GoogleTest in it, 2.7 s with only the CRI
# messages and nlohmann's json, 0.3 s with the standard headers. Hence four headers, each for the
# files that use what it holds:
#   berth_pch           berth's libraries that read the CRI messages or json;
#   berth_rpc_pch       + gRPC and the CRI services: the rpc handlers, berthd, the CRI benchmarks;
#   berth_test_pch      berth_pch's + GoogleTest, with the test code's options (GCC refuses a
#                       header built with another -O): unit and component tests;
#   berth_rpc_test_pch  berth_rpc_pch's + GoogleTest: tests that call berthd (2.5 s against 4.8 s
#                       for an empty test file, so the other tests keep apart from it).
set(berth_pch_HEADERS
  <algorithm> <chrono> <functional> <map> <memory> <mutex> <optional> <set> <string> <thread> <vector>
  <nlohmann/json.hpp> <berth/cri_messages.h>)
set(berth_rpc_pch_HEADERS ${berth_pch_HEADERS} <grpcpp/grpcpp.h> <berth/cri_api.h>)
set(berth_test_pch_HEADERS ${berth_pch_HEADERS} <gtest/gtest.h>)
set(berth_rpc_test_pch_HEADERS ${berth_rpc_pch_HEADERS} <gtest/gtest.h>)
if(BERTH_PCH AND CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$")
  set(BERTH_PCH_ON TRUE)
  # Definitions that the precompiled headers read and that would otherwise come with some targets'
  # dependencies only (GoogleTest's, gRPC's pkg-config flags): set for every target, so that GCC
  # finds them defined alike in the header's build and in each file that uses it.
  add_compile_definitions(GTEST_HAS_PTHREAD=1)
  add_compile_options(${GRPC_UNSECURE_CFLAGS_OTHER})
  file(WRITE ${CMAKE_BINARY_DIR}/berth_pch.cc "// The object of a target that owns one of berth's precompiled headers.\n")
  foreach(pch berth_pch berth_rpc_pch berth_test_pch berth_rpc_test_pch)
    add_library(${pch} STATIC ${CMAKE_BINARY_DIR}/berth_pch.cc)
    set_target_properties(${pch} PROPERTIES UNITY_BUILD OFF)
    target_link_libraries(${pch} PRIVATE berth_cri_api nlohmann_json::nlohmann_json)
    if(pch MATCHES "_test_")
      target_link_libraries(${pch} PRIVATE GTest::gtest)
    endif()
    target_precompile_headers(${pch} PRIVATE ${${pch}_HEADERS})
  endforeach()
else()
  set(BERTH_PCH_ON FALSE)
endif()

# berth_reuse_pch(<header target> <target>...): the targets start from that precompiled header.
function(berth_reuse_pch pch)
  if(BERTH_PCH_ON)
    foreach(t IN LISTS ARGN)
      target_precompile_headers(${t} REUSE_FROM ${pch})
    endforeach()
  endif()
endfunction()

# berth_use_pch(<target>...): berth's libraries and programs that read CRI messages or json.
function(berth_use_pch)
  berth_reuse_pch(berth_pch ${ARGN})
endfunction()

# berth_use_rpc_pch(<target>...): code that serves or calls the CRI services.
function(berth_use_rpc_pch)
  berth_reuse_pch(berth_rpc_pch ${ARGN})
endfunction()

# berth_test_code(<target>...): code that only tests berth (unit, component and e2e tests and
# their harness) is compiled without optimisation: it spends its time waiting on berthd, runc and
# the kernel, and at -Os its code generation took two thirds of its compile time (GoogleTest's
# assertions expand into large functions). Its debug information is line tables (-g1): a failure's
# backtrace still names the file and line, and an e2e test file compiled in 10.5 s instead of
# 14.4 s (BERTH_TEST_FULL_DEBUG_INFO=ON for a session in gdb). What it tests, the libraries and
# programs, keeps the flags berth ships with; so do the benchmark programs that measure in their own
# process (crash-bench and hostile-bench only drive berthd, and are test code).
option(BERTH_TEST_FULL_DEBUG_INFO "Full debug information in test code (default: line tables)" OFF)
set(BERTH_TEST_CODE_OPTIONS -O0)
if(NOT BERTH_TEST_FULL_DEBUG_INFO)
  list(APPEND BERTH_TEST_CODE_OPTIONS $<$<CONFIG:Debug,RelWithDebInfo>:-g1>)
endif()
if(BERTH_PCH_ON)
  target_compile_options(berth_test_pch PRIVATE ${BERTH_TEST_CODE_OPTIONS})
  target_compile_options(berth_rpc_test_pch PRIVATE ${BERTH_TEST_CODE_OPTIONS})
endif()
function(berth_test_code_from pch)
  foreach(t IN LISTS ARGN)
    target_compile_options(${t} PRIVATE ${BERTH_TEST_CODE_OPTIONS})
  endforeach()
  berth_reuse_pch(${pch} ${ARGN})
endfunction()
function(berth_test_code)
  berth_test_code_from(berth_test_pch ${ARGN})
endfunction()

# berth_rpc_test_code(<target>...): test code that calls berthd through the CRI services.
function(berth_rpc_test_code)
  berth_test_code_from(berth_rpc_test_pch ${ARGN})
endfunction()
