# The install step (docs/building.md#installing): what a machine or a container image needs to run
# diescope, all in one folder because each program finds the others beside itself (diescope-cupti,
# diescope-workload, libdiescope-range.so, libdiescope-nvtx.so). With DIESCOPE_SPLIT_DEBUG (the default) every installed
# file is stripped and its debug info goes to <prefix>/lib/debug/<absolute bin dir>/<name>.debug,
# linked back with a GNU debuglink, where gdb finds it (`set debug-file-directory <prefix>/lib/debug`;
# automatic for the prefix /usr).
include(GNUInstallDirs)
option(DIESCOPE_SPLIT_DEBUG "Install stripped binaries, their debug info kept apart under lib/debug" ON)

set(DIESCOPE_INSTALLED_FILES "")
foreach(target diescope diescope-cupti diescope-workload diescope-range diescope-nvtx)
  if(TARGET ${target})
    install(TARGETS ${target}
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
            LIBRARY DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
    list(APPEND DIESCOPE_INSTALLED_FILES "$<TARGET_FILE_NAME:${target}>")
  endif()
endforeach()

if(DIESCOPE_SPLIT_DEBUG)
  if(NOT CMAKE_OBJCOPY OR NOT CMAKE_STRIP)
    message(FATAL_ERROR "DIESCOPE_SPLIT_DEBUG needs objcopy and strip (Debian's binutils); "
                        "install binutils or configure with -DDIESCOPE_SPLIT_DEBUG=OFF")
  endif()
  install(CODE "set(DIESCOPE_FILES \"${DIESCOPE_INSTALLED_FILES}\")
set(DIESCOPE_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
set(DIESCOPE_OBJCOPY \"${CMAKE_OBJCOPY}\")
set(DIESCOPE_STRIP \"${CMAKE_STRIP}\")" COMPONENT runtime)
  install(SCRIPT ${CMAKE_CURRENT_LIST_DIR}/SplitDebug.cmake COMPONENT runtime)
endif()
