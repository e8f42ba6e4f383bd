# Included by bench/build/ci_compile_cost.sh (CMAKE_PROJECT_INCLUDE): every compile and link runs
# through bench/build/log_step_cpu.sh, which logs its CPU seconds.
set_property(GLOBAL PROPERTY RULE_LAUNCH_COMPILE "${CMAKE_CURRENT_LIST_DIR}/log_step_cpu.sh compile")
set_property(GLOBAL PROPERTY RULE_LAUNCH_LINK "${CMAKE_CURRENT_LIST_DIR}/log_step_cpu.sh link")
