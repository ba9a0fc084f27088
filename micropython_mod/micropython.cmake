# The tflm user C module, for MicroPython's CMake-based ports (rp2, esp32).
# Build with USER_C_MODULES=<this file>.
add_library(usermod_tflm INTERFACE)

file(GLOB TFLM_ENGINE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/engine/*.c ${CMAKE_CURRENT_LIST_DIR}/kernels/*.c)
set(TFLM_BINDING_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/binding/modtflm.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/model.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/interpreter.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/plan.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/predict.c
)

# The module's build settings, for every target that compiles its sources.
set(TFLM_DEFINITIONS)

# TFLM_OPS: a list of op names links only those kernels.
if(TFLM_OPS)
    list(APPEND TFLM_DEFINITIONS TFLM_KERNELS_DEFAULT=0)
    foreach(op ${TFLM_OPS})
        list(APPEND TFLM_DEFINITIONS TFLM_KERNEL_${op}=1)
    endforeach()
endif()

# TFLM_TYPES: entries OP:type,type build that op's kernel for those tensor
# types only; bare types are the list of every op without an entry (as in
# micropython.mk).
if(TFLM_TYPES)
    string(TOUPPER "${TFLM_TYPES}" TFLM_TYPES_UPPER)
    set(TFLM_TYPES_BARE "")
    foreach(entry ${TFLM_TYPES_UPPER})
        if(entry MATCHES "^([A-Z0-9_]+):(.*)$")
            set(TFLM_TYPES_OP ${CMAKE_MATCH_1})
            string(REPLACE "," ";" TFLM_TYPES_LIST "${CMAKE_MATCH_2}")
            set(TFLM_TYPES_SUM "0")
            foreach(type ${TFLM_TYPES_LIST})
                string(APPEND TFLM_TYPES_SUM "+TFLM_T_${type}")
            endforeach()
            list(APPEND TFLM_DEFINITIONS TFLM_TYPES_${TFLM_TYPES_OP}=${TFLM_TYPES_SUM})
        else()
            string(APPEND TFLM_TYPES_BARE "+TFLM_T_${entry}")
        endif()
    endforeach()
    if(TFLM_TYPES_BARE)
        list(APPEND TFLM_DEFINITIONS TFLM_TYPES=0${TFLM_TYPES_BARE})
    endif()
endif()

# TFLM_PLANNERS: a list of planners (greedy, linear, offline) links only those.
if(TFLM_PLANNERS)
    string(TOUPPER "${TFLM_PLANNERS}" TFLM_PLANNERS_UPPER)
    foreach(planner GREEDY LINEAR OFFLINE)
        if(${planner} IN_LIST TFLM_PLANNERS_UPPER)
            list(APPEND TFLM_DEFINITIONS TFLM_PLANNER_${planner}=1)
        else()
            list(APPEND TFLM_DEFINITIONS TFLM_PLANNER_${planner}=0)
        endif()
    endforeach()
endif()

# TFLM_PATCH=0 leaves patch-based stages out (tflm_config.h).
if(NOT "${TFLM_PATCH}" STREQUAL "")
    list(APPEND TFLM_DEFINITIONS TFLM_PATCH=${TFLM_PATCH})
endif()

# TFLM_PLAN: a header from `tflm-host plan --c-header`, built in as tflm.builtin_plan.
if(TFLM_PLAN)
    get_filename_component(TFLM_PLAN_ABS ${TFLM_PLAN} ABSOLUTE)
    list(APPEND TFLM_DEFINITIONS TFLM_BUILTIN_PLAN_HEADER="${TFLM_PLAN_ABS}")
endif()

# Optimization of the kernel sources, as in micropython.mk: TFLM_KERNEL_OPT
# (-O2 unless given; -DTFLM_KERNEL_OPT= keeps the port's own). Source options
# come after the target's, so they win for these files only.
if(NOT DEFINED TFLM_KERNEL_OPT)
    set(TFLM_KERNEL_OPT -O2)
endif()
# Unless the last level it names is -O2, the assembly blocks that take
# every register are left out (kernels/arch.h, TFLM_KERNEL_O2; as
# micropython.mk's TFLM_KERNEL_OPT_DEFS).
separate_arguments(TFLM_KERNEL_COMPILE_OPTIONS UNIX_COMMAND "${TFLM_KERNEL_OPT}")
set(TFLM_KERNEL_LEVEL "")
foreach(TFLM_ARG ${TFLM_KERNEL_COMPILE_OPTIONS})
    if(TFLM_ARG MATCHES "^-O")
        set(TFLM_KERNEL_LEVEL ${TFLM_ARG})
    endif()
endforeach()
if(NOT TFLM_KERNEL_LEVEL STREQUAL "-O2")
    list(APPEND TFLM_KERNEL_COMPILE_OPTIONS -DTFLM_KERNEL_O2=0)
endif()
file(GLOB TFLM_KERNEL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/kernels/*.c)
set_source_files_properties(${TFLM_KERNEL_SOURCES} PROPERTIES COMPILE_OPTIONS "${TFLM_KERNEL_COMPILE_OPTIONS}")
# invoke.c and patch.c too (TFLM_INVOKE_OPT, as in micropython.mk; empty: the port's own).
if(NOT DEFINED TFLM_INVOKE_OPT)
    set(TFLM_INVOKE_OPT ${TFLM_KERNEL_OPT})
endif()
if(TFLM_INVOKE_OPT)
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/engine/invoke.c ${CMAKE_CURRENT_LIST_DIR}/engine/patch.c
        PROPERTIES COMPILE_OPTIONS "${TFLM_INVOKE_OPT}")
endif()

if(ESP_PLATFORM)
    # ESP-IDF: the port links `usermod` to its main component, and CMake
    # passes an interface library's sources on to whatever links that
    # component: the firmware's executable compiled them all a second time,
    # without the component's options (no -O at all), and linked those
    # copies. The engine and kernels are a static library of their own
    # here, compiled once with ESP-IDF's options for speed (the port's
    # CONFIG_COMPILER_OPTIMIZATION_PERF and assertions off); only the
    # binding, which MicroPython scans for names (qstrs), stays an
    # interface source.
    add_library(tflm_engine STATIC ${TFLM_ENGINE_SOURCES})
    target_include_directories(tflm_engine PUBLIC ${CMAKE_CURRENT_LIST_DIR})
    target_compile_definitions(tflm_engine PRIVATE NDEBUG)
    if(TFLM_DEFINITIONS)
        target_compile_definitions(tflm_engine PUBLIC ${TFLM_DEFINITIONS})
    endif()
    target_compile_options(tflm_engine PRIVATE -O2 -ffunction-sections -fdata-sections -ffp-contract=off)
    target_sources(usermod_tflm INTERFACE ${TFLM_BINDING_SOURCES})
    target_link_libraries(usermod_tflm INTERFACE tflm_engine)
else()
    target_sources(usermod_tflm INTERFACE ${TFLM_BINDING_SOURCES} ${TFLM_ENGINE_SOURCES})
    target_include_directories(usermod_tflm INTERFACE ${CMAKE_CURRENT_LIST_DIR})
    if(TFLM_DEFINITIONS)
        target_compile_definitions(usermod_tflm INTERFACE ${TFLM_DEFINITIONS})
    endif()
endif()

# No fused multiply-add: results must round as TFLM's reference kernels do.
target_compile_options(usermod_tflm INTERFACE -ffp-contract=off)

target_link_libraries(usermod INTERFACE usermod_tflm)
