# Install rules (included from the top CMakeLists when SMLA_INSTALL): the public headers,
# libsmla, the `smla` CLI, a relocatable CMake package (find_package(smla) -> smla::smla)
# and a pkg-config file (smla.pc).
#
# libsmla links the CUDA runtime statically (src/CMakeLists.txt), so a consumer of the shared
# library needs no CUDA at all; only a static libsmla passes its CUDA runtime and thread
# dependencies on, which smlaConfig.cmake finds again with find_dependency.
include(CMakePackageConfigHelpers)

set(SMLA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/smla")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/smla" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(TARGETS smla EXPORT smlaTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

if(TARGET smla_cli)
  # The installed CLI finds the installed libsmla next to it, wherever the prefix is.
  set_target_properties(smla_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS smla_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

install(EXPORT smlaTargets NAMESPACE smla:: FILE smlaTargets.cmake
        DESTINATION "${SMLA_INSTALL_CMAKEDIR}")

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/smlaConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/smlaConfig.cmake"
                              INSTALL_DESTINATION "${SMLA_INSTALL_CMAKEDIR}")
# 0.x releases may break the API between minor versions.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/smlaConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/smlaConfig.cmake"
              "${PROJECT_BINARY_DIR}/smlaConfigVersion.cmake"
        DESTINATION "${SMLA_INSTALL_CMAKEDIR}")

# smla.pc locates the prefix from its own directory (${pcfiledir}), so the package works
# from any `cmake --install --prefix`, not only from CMAKE_INSTALL_PREFIX.
file(RELATIVE_PATH SMLA_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
set(SMLA_PC_LIBS_PRIVATE "-lpthread")
if(SMLA_WITH_CUDA)
  string(APPEND SMLA_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/smla.pc.in" "${PROJECT_BINARY_DIR}/smla.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/smla.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
