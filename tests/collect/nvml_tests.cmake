# NVML adapter tests (owner: units). The CPU tests drive the adapter through a fake function table
# (nvml_fake.hpp); the no-driver test uses this machine's real loader. nvml_gpu_test needs a GPU.
diescope_test(nvml_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/nvml_adapter_test.cpp ${CMAKE_CURRENT_LIST_DIR}/nvml_gpu_util_reader_test.cpp
  LIBS diescope_nvml)
target_include_directories(collect_test PRIVATE ${PROJECT_SOURCE_DIR}/src/collect/nvml)
target_link_libraries(collect_test PRIVATE ${CMAKE_DL_LIBS})

diescope_test(nvml_gpu_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/nvml_gpu_test.cpp LIBS diescope_nvml LABELS gpu)
