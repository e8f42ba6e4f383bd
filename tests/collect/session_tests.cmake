# The live session (docs/session.md) on the CPU: the fake sampler child stands in for CUPTI, a fake
# /proc tree for the host's processes, the fake NVML function table (nvml_fake.hpp) for NVML and GPM.
diescope_test(session_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/session_test.cpp LIBS diescope_session)
target_include_directories(session_test PRIVATE ${PROJECT_SOURCE_DIR}/src/collect/nvml ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(session_test PRIVATE DIESCOPE_SAMPLER_FAKE="$<TARGET_FILE:diescope_sampler_fake>")
add_dependencies(session_test diescope_sampler_fake)
