# The live session (docs/live-collection.md) on the CPU: the fake sampler child stands in for CUPTI, a fake
# /proc tree for the host's processes, the fake NVML function table (nvml_fake.hpp) for NVML and GPM.
diescope_test(live_collection_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/live_collection_test.cpp LIBS diescope_live)
target_include_directories(collect_test PRIVATE ${PROJECT_SOURCE_DIR}/src/collect/nvml ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(collect_test PRIVATE DIESCOPE_SAMPLER_FAKE="$<TARGET_FILE:diescope_sampler_fake>")
diescope_test_needs(collect_test diescope_sampler_fake)
# The live driver's one wait (docs/live-collection.md#the-driver), with a fake feed: timers and a pipe.
diescope_test(live_driver_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/live_driver_test.cpp LIBS diescope_live)
