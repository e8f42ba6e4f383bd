# diescope_warnings(<target>): the project's warning set; errors when DIESCOPE_WERROR is on (CI).
add_library(diescope_warnings INTERFACE)
target_compile_options(diescope_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${DIESCOPE_WERROR}>>:-Werror>)
