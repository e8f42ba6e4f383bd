# The sampler's CPU tests (included from tests/collect/CMakeLists.txt). The fake child stands in
# for diescope-cupti so crashes and errors are tested without a GPU.
add_executable(diescope_sampler_fake ${CMAKE_CURRENT_LIST_DIR}/sampler_fake_main.cpp)
target_link_libraries(diescope_sampler_fake PRIVATE diescope_sampler diescope_warnings)
diescope_test(sampler_protocol_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampler_protocol_test.cpp LIBS diescope_sampler)
diescope_test(sampler_process_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampler_process_test.cpp LIBS diescope_sampler)
target_compile_definitions(collect_test PRIVATE DIESCOPE_SAMPLER_FAKE="$<TARGET_FILE:diescope_sampler_fake>")
diescope_test_needs(collect_test diescope_sampler_fake)

# A small FFMA/copy load with its own phase times, for bench/sampler/device_checks.sh on a GPU.
if(DIESCOPE_HAVE_NVCC)
  add_executable(sampler_gpu_load ${CMAKE_CURRENT_LIST_DIR}/sampler_gpu_load.cu)
  set_target_properties(sampler_gpu_load PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin
    CUDA_STANDARD 17 CUDA_RUNTIME_LIBRARY Static)
endif()
diescope_test(sampler_retimer_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampler_retimer_test.cpp LIBS diescope_sampler)
diescope_test(sampler_sizing_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampler_sizing_test.cpp LIBS diescope_sampler
  SERIAL ImageRing.TheDecodeWaitsOnlyWhenEveryImageIsDecodedAndSaysHowLong)
diescope_test(sampler_stop_watcher_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampler_stop_watcher_test.cpp LIBS diescope_sampler)

# The real CUPTI child on a GPU (skips where there is no driver).
if(TARGET diescope-cupti OR DIESCOPE_HAVE_CUPTI)
  diescope_test(sampler_gpu_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampler_gpu_test.cpp LIBS diescope_sampler
    LABELS gpu)
  target_link_libraries(sampler_gpu_test PRIVATE ${CMAKE_DL_LIBS})
  target_compile_definitions(sampler_gpu_test PRIVATE DIESCOPE_CUPTI_EXE="${PROJECT_BINARY_DIR}/bin/diescope-cupti")
endif()
