# Sanitizer builds of the whole tree (the sanitizer stages of scripts/test --all): BERTH_SANITIZE is
# "address,undefined" or "thread". Every report aborts the process, so a finding fails its test.
# berth-pause and syscall_probe stay uninstrumented and static: they run inside containers, with
# no libraries there and under seccomp filters a sanitizer runtime's start-up would trip.
set(BERTH_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address,undefined or thread (clang or GCC)")
if(BERTH_SANITIZE)
  if(NOT BERTH_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
    message(FATAL_ERROR "BERTH_SANITIZE must be address,undefined or thread, not '${BERTH_SANITIZE}'")
  endif()
  # vptr needs RTTI, which berth-monitor is built without.
  # -O1 -g1 (after the build type's flags and lean_deps' -Os, so they win): instrumented code
  # compiles in about half the time of -O2 -g and keeps usable stack traces.
  add_compile_options(-fsanitize=${BERTH_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g1)
  if(BERTH_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize=vptr)
  endif()
  add_link_options(-fsanitize=${BERTH_SANITIZE})
  # Tests that bound berthd's RSS skip those bounds: a sanitizer's quarantine and shadow memory
  # make RSS meaningless (stage 1 and hostile-bench measure it).
  add_compile_definitions(BERTH_SANITIZED)
endif()

# berth_unsanitized(<target>): a program that must stay static and free of any sanitizer runtime.
function(berth_unsanitized target)
  if(BERTH_SANITIZE)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
    target_link_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()

# berth_static_program(<target>): linked statically, except in sanitizer builds (the sanitizer
# runtimes are shared libraries).
function(berth_static_program target)
  if(NOT BERTH_SANITIZE)
    target_link_options(${target} PRIVATE -static)
  endif()
endfunction()

# berth_generated_code(<target>): protoc's output is not ours to keep warning-free, nor to debug
# (without debug info the CRI's compiles in half the time, 70 s against 38 s; the code is the
# same), nor to sanitize or fuzz: it was the costliest file of both builds (100 s with ASan, 160 s
# with the fuzzer's coverage), and berth's own code around it keeps every check. The programs
# still link the sanitizer runtimes.
function(berth_generated_code target)
  target_compile_options(${target} PRIVATE -w -g0)
  if(BERTH_SANITIZE OR BERTH_FUZZ)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()
