# Run by `cmake --install` after the binaries are in place (cmake/Install.cmake sets DIESCOPE_FILES,
# DIESCOPE_BINDIR, DIESCOPE_OBJCOPY and DIESCOPE_STRIP): each file's debug info copied out with
# objcopy --only-keep-debug, the file stripped, and a debuglink to the copy added
# (docs/building.md#installing).
set(bindir "${CMAKE_INSTALL_PREFIX}/${DIESCOPE_BINDIR}")
# gdb looks for <debug-file-directory>/<the binary's absolute folder>/<debuglink name>.
set(debugdir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/lib/debug${bindir}")
file(MAKE_DIRECTORY "${debugdir}")
foreach(name IN LISTS DIESCOPE_FILES)
  set(file "$ENV{DESTDIR}${bindir}/${name}")
  set(debug "${debugdir}/${name}.debug")
  execute_process(COMMAND "${DIESCOPE_OBJCOPY}" --only-keep-debug "${file}" "${debug}" COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND "${DIESCOPE_STRIP}" --strip-debug --strip-unneeded "${file}" COMMAND_ERROR_IS_FATAL ANY)
  # The link holds the name and a CRC of the debug file; objcopy reads it from the path given.
  execute_process(COMMAND "${DIESCOPE_OBJCOPY}" "--add-gnu-debuglink=${debug}" "${file}" COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "Split debug info: ${debug}")
endforeach()
