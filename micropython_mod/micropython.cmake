# The tflm user C module, for MicroPython's CMake-based ports (rp2, esp32).
# Build with USER_C_MODULES=<this file>.
add_library(usermod_tflm INTERFACE)

file(GLOB TFLM_ENGINE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/engine/*.c ${CMAKE_CURRENT_LIST_DIR}/kernels/*.c)

target_sources(usermod_tflm INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/binding/modtflm.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/model.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/interpreter.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/plan.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/predict.c
    ${TFLM_ENGINE_SOURCES}
)

target_include_directories(usermod_tflm INTERFACE ${CMAKE_CURRENT_LIST_DIR})

# No fused multiply-add: results must round as TFLM's reference kernels do.
target_compile_options(usermod_tflm INTERFACE -ffp-contract=off)

# Optimization of the kernel sources, as in micropython.mk: TFLM_KERNEL_OPT
# (-O2 unless given; -DTFLM_KERNEL_OPT= keeps the port's own). Source options
# come after the port's, so they win for these files only.
if(NOT DEFINED TFLM_KERNEL_OPT)
    set(TFLM_KERNEL_OPT -O2)
endif()
if(TFLM_KERNEL_OPT)
    file(GLOB TFLM_KERNEL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/kernels/*.c)
    set_source_files_properties(${TFLM_KERNEL_SOURCES} PROPERTIES COMPILE_OPTIONS "${TFLM_KERNEL_OPT}")
endif()

# TFLM_OPS: a list of op names links only those kernels.
if(TFLM_OPS)
    target_compile_definitions(usermod_tflm INTERFACE TFLM_KERNELS_DEFAULT=0)
    foreach(op ${TFLM_OPS})
        target_compile_definitions(usermod_tflm INTERFACE TFLM_KERNEL_${op}=1)
    endforeach()
endif()

# TFLM_PLANNERS: a list of planners (greedy, linear, offline) links only those.
if(TFLM_PLANNERS)
    string(TOUPPER "${TFLM_PLANNERS}" TFLM_PLANNERS_UPPER)
    foreach(planner GREEDY LINEAR OFFLINE)
        if(${planner} IN_LIST TFLM_PLANNERS_UPPER)
            target_compile_definitions(usermod_tflm INTERFACE TFLM_PLANNER_${planner}=1)
        else()
            target_compile_definitions(usermod_tflm INTERFACE TFLM_PLANNER_${planner}=0)
        endif()
    endforeach()
endif()

# TFLM_PLAN: a header from `tflm-host plan --c-header`, built in as tflm.builtin_plan.
if(TFLM_PLAN)
    get_filename_component(TFLM_PLAN_ABS ${TFLM_PLAN} ABSOLUTE)
    target_compile_definitions(usermod_tflm INTERFACE TFLM_BUILTIN_PLAN_HEADER="${TFLM_PLAN_ABS}")
endif()

target_link_libraries(usermod INTERFACE usermod_tflm)
