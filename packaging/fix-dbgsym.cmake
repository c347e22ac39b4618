# Runs debian/fix-dbgsym on each .ddeb CPack made (see that script for why).
foreach(file IN LISTS CPACK_PACKAGE_FILES)
  if(file MATCHES "\\.ddeb$")
    execute_process(COMMAND ${CMAKE_CURRENT_LIST_DIR}/debian/fix-dbgsym ${file} ${CPACK_DEBIAN_COMPRESSION_TYPE}
                    COMMAND_ERROR_IS_FATAL ANY)
  endif()
endforeach()
