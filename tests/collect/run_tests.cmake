# `diescope run`'s collector on the CPU: the fake sampler child and a fake NVML table stand in for
# the GPU (owner: sampler).
diescope_test(run_collect_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/run_collect_test.cpp
  LIBS diescope_run diescope_gpm diescope_analysis diescope_recording
  SERIAL RunCollect.DutyCycle*)
target_include_directories(collect_test PRIVATE ${PROJECT_SOURCE_DIR}/src/collect/nvml ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(collect_test PRIVATE DIESCOPE_SAMPLER_FAKE="$<TARGET_FILE:diescope_sampler_fake>")
diescope_test_needs(collect_test diescope_sampler_fake)
