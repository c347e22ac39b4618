# Dependency targets shaped for berthd's idle RSS (README "Memory"): static archives where Debian
# ships them, header-only where the library allows it, and no libcurl or libarchive at link time.
# Unreferenced functions (the generated client stubs, unused template code) leave the binaries.
add_compile_options(-ffunction-sections -fdata-sections)
add_link_options(-Wl,--gc-sections)
# Optimised for size outside Debug builds (it comes after CMake's -O2, so it wins): an idle
# berthd keeps most of its text mapped, and -Os makes that text 1.7 MB smaller, about 0.9 MiB less
# idle RSS (measured: 9.1-9.3 MiB against 9.9-10.3 MiB), with Exec and port-forward throughput
# within the benchmarks' noise. The hot loops (protobuf, gRPC, zlib, the kernel) are not ours.
add_compile_options($<$<NOT:$<CONFIG:Debug>>:-Os>)

# berth_static_deps(<target> <name>...): an INTERFACE target linking lib<name>.a for each name, in
# one rescanned group so the archives' order does not matter.
function(berth_static_deps target)
  set(archives)
  foreach(name IN LISTS ARGN)
    find_library(BERTH_STATIC_${name} NAMES lib${name}.a REQUIRED)
    list(APPEND archives ${BERTH_STATIC_${name}})
  endforeach()
  list(JOIN archives "," group)
  add_library(${target} INTERFACE)
  target_link_libraries(${target} INTERFACE "$<LINK_GROUP:RESCAN,${group}>")
endfunction()

# gRPC without TLS (berthd serves a unix socket; clients are local), protobuf and abseil. The
# abseil list comes from pkg-config; Debian's .pc files omit upb, re2, c-ares and address_sorting.
pkg_check_modules(GRPC_UNSECURE REQUIRED grpc++_unsecure protobuf)
set(grpc_archives grpc++_unsecure grpc_unsecure gpr upb re2 cares address_sorting protobuf z)
foreach(lib IN LISTS GRPC_UNSECURE_STATIC_LIBRARIES)
  if(lib MATCHES "^absl_")
    list(APPEND grpc_archives ${lib})
  endif()
endforeach()
list(REMOVE_DUPLICATES grpc_archives)
berth_static_deps(berth_grpc_static ${grpc_archives})
target_include_directories(berth_grpc_static INTERFACE ${GRPC_UNSECURE_INCLUDE_DIRS})
target_compile_options(berth_grpc_static INTERFACE ${GRPC_UNSECURE_CFLAGS_OTHER})
target_link_libraries(berth_grpc_static INTERFACE atomic Threads::Threads)

pkg_check_modules(LIBNL REQUIRED libnl-3.0 libnl-route-3.0)
berth_static_deps(berth_libnl_static nl-route-3 nl-3)
target_include_directories(berth_libnl_static INTERFACE ${LIBNL_INCLUDE_DIRS})
berth_static_deps(berth_seccomp_static seccomp)
berth_static_deps(berth_cap_static cap)

# spdlog and fmt: the berth_log target of log/ (spdlog compiled once, static; never spdlog::spdlog,
# which would bring the shared build back). The definitions apply to every file, including those
# that include spdlog's headers through a library's public headers.
add_compile_definitions(SPDLOG_FMT_EXTERNAL SPDLOG_COMPILED_LIB)

# sha256 and base64 from nettle rather than OpenSSL's libcrypto: libcrypto costs ~1.4 MiB of RSS
# from start (relocating it) and ~3.4 MiB once a digest was made (provider set-up); nettle
# ~0.3 MiB. Shared, as it is LGPL. libcurl still brings OpenSSL with it, at the first pull.
pkg_check_modules(NETTLE REQUIRED IMPORTED_TARGET nettle)
add_library(berth_nettle INTERFACE)
target_link_libraries(berth_nettle INTERFACE PkgConfig::NETTLE)
# Signature checks (ECDSA P-256, Ed25519) from nettle's public-key half, hogweed, and the GMP it
# computes with: the same project's library rather than OpenSSL's, for the reason above.
pkg_check_modules(HOGWEED REQUIRED IMPORTED_TARGET hogweed)
find_library(BERTH_GMP_LIBRARY gmp REQUIRED)
add_library(berth_hogweed INTERFACE)
target_link_libraries(berth_hogweed INTERFACE PkgConfig::HOGWEED ${BERTH_GMP_LIBRARY} berth_nettle)

# toml++ header-only (its default; Debian's .pc asks for the shared build).
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h REQUIRED)
add_library(berth_toml INTERFACE)
target_include_directories(berth_toml INTERFACE ${TOMLPP_INCLUDE_DIR})

# yaml-cpp for CDI's YAML spec files, from Debian's static archive: its shared library would bring
# the shared libstdc++ and libgcc_s into berthd (measured +2.3 MiB idle RSS with the .so).
find_path(BERTH_YAML_CPP_INCLUDE yaml-cpp/yaml.h REQUIRED)
berth_static_deps(berth_yaml_cpp_static yaml-cpp)
target_include_directories(berth_yaml_cpp_static INTERFACE ${BERTH_YAML_CPP_INCLUDE})
