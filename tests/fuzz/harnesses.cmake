# The fuzz harnesses and what each needs (sources, private headers, libraries); shared by the
# libFuzzer executables (CMakeLists.txt here, BERTH_FUZZ builds) and the corpus replay that runs in
# every build (regressions.cmake), so both compile exactly the same harness code.
set(BERTH_FUZZ_HARNESSES
  spdy_frame spdy_headers spdy_session websocket http_upgrade
  image_reference manifest www_authenticate
  cni_result config records
  monitor_protocol exit_record cri_log
  cgroup_files cdi pull_worker exec_request)

# image/'s parsers without the rest of berth_image: the fuzz build instruments every source it
# compiles, and the registry client, store and unpacker hold no parser a harness reaches.
if(NOT TARGET berth_fuzz_image_parsers)
  set(image ${PROJECT_SOURCE_DIR}/image)
  add_library(berth_fuzz_image_parsers STATIC ${image}/image_reference.cc ${image}/bearer_realm.cc
              ${image}/manifest.cc ${image}/registry_error.cc ${image}/image_index.cc ${image}/sha256.cc ${image}/pull_libraries.cc ${image}/pull_worker_protocol.cc)
  target_include_directories(berth_fuzz_image_parsers PUBLIC ${image}/include ${image})
  target_link_libraries(berth_fuzz_image_parsers PUBLIC berth_status berth_posix berth_json berth_nettle berth_log
                        nlohmann_json::nlohmann_json Threads::Threads ${CMAKE_DL_LIBS})
endif()

# Adds harness `name` (tests/fuzz/fuzz_<name>.cc) to `target`.
function(berth_fuzz_harness target name)
  set(src ${PROJECT_SOURCE_DIR})
  target_sources(${target} PRIVATE ${src}/tests/fuzz/fuzz_${name}.cc)
  if(name MATCHES "^(spdy_frame|spdy_headers|spdy_session|websocket|http_upgrade)$")
    target_include_directories(${target} PRIVATE ${src}/streaming)
    target_link_libraries(${target} PRIVATE berth_streaming berth_posix Boost::system berth_log Threads::Threads)
  elseif(name MATCHES "^(image_reference|manifest|www_authenticate|pull_worker)$")
    target_link_libraries(${target} PRIVATE berth_fuzz_image_parsers)
  elseif(name STREQUAL "cni_result")
    target_link_libraries(${target} PRIVATE berth_network berth_checkpoint berth_posix berth_log
                                            nlohmann_json::nlohmann_json)
  elseif(name STREQUAL "config")
    # server/config.cc (and its printer) alone: linking berth_server would bring all of berthd (and gRPC) along.
    target_sources(${target} PRIVATE ${src}/server/config.cc ${src}/server/config_print.cc)
    target_include_directories(${target} PRIVATE ${src}/server/include ${src}/image/include)
    target_link_libraries(${target} PRIVATE berth_status berth_toml nlohmann_json::nlohmann_json)
  elseif(name STREQUAL "records")
    target_link_libraries(${target} PRIVATE berth_checkpoint berth_posix nlohmann_json::nlohmann_json)
  elseif(name MATCHES "^(monitor_protocol|exit_record|cri_log)$")
    target_include_directories(${target} PRIVATE ${src}/monitor)
    target_link_libraries(${target} PRIVATE berth_monitor berth_monitor_wire berth_posix)
  elseif(name STREQUAL "cgroup_files")
    # stats/'s parsers alone: berth_stats links the container and sandbox managers for its collector.
    target_sources(${target} PRIVATE ${src}/stats/cgroup_pressure.cc ${src}/stats/cgroup_io.cc)
    target_include_directories(${target} PRIVATE ${src}/stats/include)
  elseif(name STREQUAL "exec_request")
    # The encoder and the helper's parser alone: berth_container would bring every manager along.
    target_sources(${target} PRIVATE ${src}/container/exec_helper.cc ${src}/container/program/exec_request_parse.cc)
    target_include_directories(${target} PRIVATE ${src}/container)
    target_link_libraries(${target} PRIVATE berth_oci berth_json berth_posix berth_status nlohmann_json::nlohmann_json)
  elseif(name STREQUAL "cdi")
    target_link_libraries(${target} PRIVATE berth_cdi nlohmann_json::nlohmann_json)
  else()
    message(FATAL_ERROR "berth_fuzz_harness: unknown harness ${name}")
  endif()
endfunction()
