# Sanitizer builds of the whole tree (scripts/test's second and third stages): BERTH_SANITIZE is
# "address,undefined" or "thread". Every report aborts the process, so a finding fails its test.
# berth-pause and syscall_probe stay uninstrumented and static: they run inside containers, with
# no libraries there and under seccomp filters a sanitizer runtime's start-up would trip.
set(BERTH_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address,undefined or thread (clang or GCC)")
if(BERTH_SANITIZE)
  if(NOT BERTH_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
    message(FATAL_ERROR "BERTH_SANITIZE must be address,undefined or thread, not '${BERTH_SANITIZE}'")
  endif()
  # vptr needs RTTI, which berth-monitor is built without.
  # -g1 and the optimisation level come after the build type's flags and lean_deps' -Os, so they
  # win. ASan's build is at -O0: clang compiles instrumented code 2.4 times faster than at -O1 (the
  # Beast batch of streaming/: 37 s against 91 s of CPU), the whole build is the longest step of
  # scripts/test, and its tests mostly wait on runc and daemons. TSan's stays at -O1: it runs only
  # the thread-heavy tests, whose interleavings are what it checks, and builds a few targets.
  if(BERTH_SANITIZE MATCHES "address")
    set(sanitized_opt -O0)
  else()
    set(sanitized_opt -O1)
  endif()
  add_compile_options(-fsanitize=${BERTH_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer ${sanitized_opt} -g1)
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
