# NVML GPM (owner: gpm): GpmSampler driven through the fake NVML table (nvml_fake.hpp), on the CPU.
diescope_test(gpm_sampler_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpm_sampler_test.cpp LIBS diescope_gpm)
target_include_directories(collect_test PRIVATE ${PROJECT_SOURCE_DIR}/src/collect/nvml ${CMAKE_CURRENT_LIST_DIR})
