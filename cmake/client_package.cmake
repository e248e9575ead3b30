# libtickwire for applications outside this tree (docs/client.md, "Installing"):
# `cmake --install` puts the public headers under include/tickwire/, a static and
# a shared libtickwire (the client with the wire codec, field lists, topics and
# transports it is made of), a CMake package (find_package(Tickwire) gives
# Tickwire::client, and Tickwire::client_static) and tickwire.pc.
#
# The library is compiled from the same sources as tw_client and its modules,
# position-independent, into one archive and one shared object, so an
# application links one library rather than seven internal ones.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TW_CLIENT_PACKAGE_MODULES tw_client tw_wire tw_fields tw_topic tw_transport tw_io tw_base)
set(tw_package_sources "")
foreach(module IN LISTS TW_CLIENT_PACKAGE_MODULES)
  get_target_property(dir ${module} SOURCE_DIR)
  get_target_property(sources ${module} SOURCES)
  foreach(source IN LISTS sources)
    list(APPEND tw_package_sources ${dir}/${source})
  endforeach()
endforeach()

# The headers an application sees are the tree's include/tickwire/ (the
# client API and what it includes), installed as they are: they include each
# other as "tickwire/...", so only the include/ folder goes on an
# application's include path, in the tree and installed alike.

find_package(nlohmann_json REQUIRED)
find_package(OpenSSL 3 REQUIRED)
# Compiled once, position-independent, for both libraries.
add_library(tickwire_objects OBJECT ${tw_package_sources})
set_target_properties(tickwire_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(tickwire_objects PRIVATE nlohmann_json::nlohmann_json OpenSSL::SSL)
foreach(kind static shared)
  string(TOUPPER ${kind} KIND)
  add_library(tickwire_${kind} ${KIND} $<TARGET_OBJECTS:tickwire_objects>)
  set_target_properties(tickwire_${kind} PROPERTIES OUTPUT_NAME tickwire EXPORT_NAME client_${kind})
  target_include_directories(tickwire_${kind} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(tickwire_${kind} PUBLIC OpenSSL::SSL OpenSSL::Crypto Threads::Threads)
endforeach()
set_target_properties(tickwire_shared PROPERTIES EXPORT_NAME client VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR})

# Components: lib (the shared object) and dev (the rest), the packages of cmake/debian_package.cmake.
install(TARGETS tickwire_static tickwire_shared EXPORT TickwireTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
install(EXPORT TickwireTargets NAMESPACE Tickwire:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tickwire COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/TickwireConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/TickwireConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tickwire)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/TickwireConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/TickwireConfig.cmake ${CMAKE_BINARY_DIR}/TickwireConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tickwire COMPONENT dev)
# The prefix is found from the .pc file's own place, so `cmake --install --prefix P` works for any P.
file(RELATIVE_PATH TW_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${CMAKE_SOURCE_DIR}/cmake/tickwire.pc.in ${CMAKE_BINARY_DIR}/tickwire.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tickwire.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tickwire DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
