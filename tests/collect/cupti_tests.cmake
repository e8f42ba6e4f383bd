# The one CUPTI check (src/collect/cupti), with fake result codes: needs CUPTI's library, no GPU.
if(TARGET diescope_cupti_call)
  diescope_test(cupti_call_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/cupti_call_test.cpp LIBS diescope_cupti_call)
endif()
