# Script of the `install_consumer` CTest test (cmake -P). Inputs: SMLA_BUILD_DIR,
# CONSUMER_DIR, WORK_DIR, CXX, GENERATOR, STATIC_LIB (1 when libsmla is a static library). Any failing step fails the test with its output.

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "${what}:\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (exit ${rc})")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

run_step("install into ${prefix}" "${CMAKE_COMMAND}" --install "${SMLA_BUILD_DIR}" --prefix "${prefix}")

# 1. CMake package.
run_step("configure the consumer with find_package(smla)"
         "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer-build" -G "${GENERATOR}"
         "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${prefix}")
run_step("build the consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer-build")
run_step("run the consumer (CMake)" "${WORK_DIR}/consumer-build/smla_consumer")
run_step("run the C consumer (CMake)" "${WORK_DIR}/consumer-build/smla_c_consumer")

# 2. pkg-config, from wherever GNUInstallDirs put the library directory.
file(GLOB_RECURSE pc_files "${prefix}/*/smla.pc")
list(LENGTH pc_files pc_count)
if(NOT pc_count EQUAL 1)
  message(FATAL_ERROR "install test: expected one installed smla.pc, found '${pc_files}'")
endif()
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
find_program(PKG_CONFIG pkg-config REQUIRED)
# A static libsmla needs its private dependencies (threads, the static CUDA runtime) too.
set(pc_static "")
if(STATIC_LIB)
  set(pc_static --static)
endif()
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs ${pc_static} smla RESULT_VARIABLE rc
                OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install test: pkg-config --cflags --libs smla failed: ${pc_err}")
endif()
message(STATUS "pkg-config --cflags --libs smla: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run_step("compile and link the consumer with pkg-config flags"
         "${CXX}" -std=c++20 "${CONSUMER_DIR}/main.cpp" ${pc_flags} -o "${WORK_DIR}/consumer-pc")
get_filename_component(lib_dir "${pc_dir}" DIRECTORY)
set(ENV{LD_LIBRARY_PATH} "${lib_dir}")
run_step("run the consumer (pkg-config)" "${WORK_DIR}/consumer-pc")

# 3. The installed CLI, when the build has one, runs from the prefix (its RPATH finds libsmla).
if(EXISTS "${prefix}/bin/smla")
  unset(ENV{LD_LIBRARY_PATH})
  run_step("run the installed CLI" "${prefix}/bin/smla" info)
endif()
