# Unit-table tests (owner: units). units_passes_test runs diescope-cupti, so it needs CUPTI's
# library (not a GPU) and runs in CI.
diescope_test(units_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/units_tables_test.cpp ${CMAKE_CURRENT_LIST_DIR}/units_json_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/units_catalog_test.cpp
  LIBS diescope_units diescope_metrics nlohmann_json::nlohmann_json)

if(TARGET diescope-cupti)
  diescope_test(units_passes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/units_passes_test.cpp LIBS diescope_units)
  target_compile_definitions(collect_test PRIVATE DIESCOPE_CUPTI_TOOL="$<TARGET_FILE:diescope-cupti>")
  diescope_test_needs(collect_test diescope-cupti)
endif()
