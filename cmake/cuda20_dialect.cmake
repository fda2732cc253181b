# CMake before 3.26 (Debian 12 ships 3.25) does not know how to ask nvcc for C++20, and then
# refuses CMAKE_CUDA_STANDARD 20 at generation ("requires the language dialect CUDA20").
# nvcc 12+ takes -std=c++20; tell CMake so unless it already knows. Included by the top
# CMakeLists right after enable_language(CUDA).
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION OR CMAKE_CUDA20_STANDARD_COMPILE_OPTION STREQUAL "")
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
