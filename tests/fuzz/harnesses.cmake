# The fuzz harnesses and what each needs (sources, private headers, libraries); shared by the
# libFuzzer executables (CMakeLists.txt here, BERTH_FUZZ builds) and the corpus replay that runs in
# every build (regressions.cmake), so both compile exactly the same harness code.
set(BERTH_FUZZ_HARNESSES
  spdy_frame spdy_headers spdy_session websocket http_upgrade
  image_reference manifest www_authenticate
  cni_result config records
  monitor_protocol exit_record cri_log
  cgroup_files cdi pull_worker exec_request traceparent registry_auth image_signature layer_unpack nri_wire
  checkpoint_archive)

# A tree that builds everything (the default build, the ASan tree that also builds the fuzzers)
# links the harnesses to the libraries it builds anyway. A fuzz-only tree (scripts/fuzz's own)
# compiles just the parsers they reach: everything it compiles is instrumented, and the registry
# client, store, managers and gRPC server hold no parser a harness reaches (the unpacker does:
# layer paths, whiteouts, the gzip trailer).
if(BERTH_FUZZ AND NOT BERTH_SANITIZE)
  set(berth_fuzz_lean TRUE)
else()
  set(berth_fuzz_lean FALSE)
endif()

# image/'s parsers without the rest of berth_image (fuzz-only trees).
if(berth_fuzz_lean AND NOT TARGET berth_fuzz_image_parsers)
  set(image ${PROJECT_SOURCE_DIR}/image)
  add_library(berth_fuzz_image_parsers STATIC ${image}/image_reference.cc ${image}/bearer_realm.cc
              ${image}/manifest.cc ${image}/registry_error.cc ${image}/image_index.cc ${image}/sha256.cc ${image}/pull_libraries.cc ${image}/pull_worker_protocol.cc
              ${image}/node_credentials.cc ${image}/base64_bytes.cc ${image}/signature_policy.cc
              ${image}/layer_unpack.cc)
  target_include_directories(berth_fuzz_image_parsers PUBLIC ${image}/include ${image})
  target_link_libraries(berth_fuzz_image_parsers PUBLIC berth_status berth_posix berth_json berth_nettle berth_hogweed berth_log
                        nlohmann_json::nlohmann_json Threads::Threads ${CMAKE_DL_LIBS})
endif()

# Adds harness `name` (tests/fuzz/fuzz_<name>.cc) to `target`.
function(berth_fuzz_harness target name)
  set(src ${PROJECT_SOURCE_DIR})
  target_sources(${target} PRIVATE ${src}/tests/fuzz/fuzz_${name}.cc)
  if(name MATCHES "^(spdy_frame|spdy_headers|spdy_session|websocket|http_upgrade)$")
    target_include_directories(${target} PRIVATE ${src}/streaming)
    target_link_libraries(${target} PRIVATE berth_streaming berth_posix Boost::system berth_log Threads::Threads)
  elseif(name MATCHES "^(image_reference|manifest|www_authenticate|pull_worker|registry_auth|image_signature|layer_unpack)$")
    if(berth_fuzz_lean)
      target_link_libraries(${target} PRIVATE berth_fuzz_image_parsers)
    else()
      target_include_directories(${target} PRIVATE ${src}/image)
      target_link_libraries(${target} PRIVATE berth_image)
    endif()
    if(name STREQUAL "layer_unpack")
      target_link_libraries(${target} PRIVATE ZLIB::ZLIB)  # the harness gzips its inputs
    endif()
  elseif(name STREQUAL "cni_result")
    target_link_libraries(${target} PRIVATE berth_network berth_checkpoint berth_posix berth_log
                                            nlohmann_json::nlohmann_json)
  elseif(name STREQUAL "config")
    # server/config.cc (and its printer) alone in a fuzz-only tree: berth_server brings all of berthd.
    target_include_directories(${target} PRIVATE ${src}/server/include ${src}/image/include)
    if(berth_fuzz_lean)
      target_sources(${target} PRIVATE ${src}/server/config.cc ${src}/server/config_print.cc
                     ${src}/server/pinned_images.cc)
      target_link_libraries(${target} PRIVATE berth_status berth_toml berth_fuzz_image_parsers berth_posix
                                              nlohmann_json::nlohmann_json)
    else()
      target_link_libraries(${target} PRIVATE berth_server)
    endif()
  elseif(name STREQUAL "records")
    target_link_libraries(${target} PRIVATE berth_checkpoint berth_posix nlohmann_json::nlohmann_json)
  elseif(name MATCHES "^(monitor_protocol|exit_record|cri_log)$")
    target_include_directories(${target} PRIVATE ${src}/monitor)
    target_link_libraries(${target} PRIVATE berth_monitor berth_monitor_wire berth_posix)
  elseif(name STREQUAL "cgroup_files")
    # stats/'s parsers alone in a fuzz-only tree: berth_stats links the managers for its collector.
    target_include_directories(${target} PRIVATE ${src}/stats/include)
    if(berth_fuzz_lean)
      target_sources(${target} PRIVATE ${src}/stats/cgroup_pressure.cc ${src}/stats/cgroup_io.cc)
    else()
      target_link_libraries(${target} PRIVATE berth_stats)
    endif()
  elseif(name STREQUAL "exec_request")
    # The encoder and the helper's parser alone in a fuzz-only tree: berth_container brings every
    # manager along. The parser is compiled here in every tree: berth_exec_wire builds it for
    # berth-exec without exceptions.
    target_sources(${target} PRIVATE ${src}/container/program/exec_request_parse.cc)
    target_include_directories(${target} PRIVATE ${src}/container)
    target_link_libraries(${target} PRIVATE berth_oci berth_json berth_posix berth_status nlohmann_json::nlohmann_json)
    if(berth_fuzz_lean)
      target_sources(${target} PRIVATE ${src}/container/exec_helper.cc)
    else()
      target_link_libraries(${target} PRIVATE berth_container)
    endif()
  elseif(name STREQUAL "cdi")
    target_link_libraries(${target} PRIVATE berth_cdi nlohmann_json::nlohmann_json)
  elseif(name STREQUAL "traceparent")
    target_link_libraries(${target} PRIVATE berth_tracing nlohmann_json::nlohmann_json)
  elseif(name STREQUAL "nri_wire")
    target_link_libraries(${target} PRIVATE berth_nri)
  elseif(name STREQUAL "checkpoint_archive")
    # The archive code (libarchive linked directly, as berth-checkpoint-archive has it) and
    # config.dump's parser: in a fuzz-only tree their sources alone (berth_container brings every
    # manager along).
    target_include_directories(${target} PRIVATE ${src}/image ${src}/container/include)
    if(berth_fuzz_lean)
      pkg_check_modules(BERTH_FUZZ_LIBARCHIVE REQUIRED libarchive)
      target_sources(${target} PRIVATE ${src}/image/checkpoint_archive.cc ${src}/container/checkpoint_config.cc)
      target_include_directories(${target} PRIVATE ${BERTH_FUZZ_LIBARCHIVE_INCLUDE_DIRS})
      target_link_libraries(${target} PRIVATE berth_fuzz_image_parsers ${BERTH_FUZZ_LIBARCHIVE_LIBRARIES} berth_json
                                              berth_posix berth_status nlohmann_json::nlohmann_json)
    else()
      target_link_libraries(${target} PRIVATE berth_checkpoint_archive berth_container)
    endif()
  else()
    message(FATAL_ERROR "berth_fuzz_harness: unknown harness ${name}")
  endif()
endfunction()
