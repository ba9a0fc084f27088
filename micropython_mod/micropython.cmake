# The tflm user C module, for MicroPython's CMake-based ports (rp2, esp32).
# Build with USER_C_MODULES=<this file>.
add_library(usermod_tflm INTERFACE)

file(GLOB TFLM_ENGINE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/engine/*.c ${CMAKE_CURRENT_LIST_DIR}/kernels/*.c)

target_sources(usermod_tflm INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/binding/modtflm.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/model.c
    ${CMAKE_CURRENT_LIST_DIR}/binding/interpreter.c
    ${TFLM_ENGINE_SOURCES}
)

target_include_directories(usermod_tflm INTERFACE ${CMAKE_CURRENT_LIST_DIR})

# No fused multiply-add: results must round as TFLM's reference kernels do.
target_compile_options(usermod_tflm INTERFACE -ffp-contract=off)

# TFLM_OPS: a list of op names links only those kernels.
if(TFLM_OPS)
    target_compile_definitions(usermod_tflm INTERFACE TFLM_KERNELS_DEFAULT=0)
    foreach(op ${TFLM_OPS})
        target_compile_definitions(usermod_tflm INTERFACE TFLM_KERNEL_${op}=1)
    endforeach()
endif()

target_link_libraries(usermod INTERFACE usermod_tflm)
