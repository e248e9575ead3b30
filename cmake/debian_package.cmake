# The Debian packages (docs/operations.md, "Debian package"), built with CPack:
#   cpack -G DEB --config build/CPackConfig.cmake
# gives three packages:
#   tickwire         tickwired (a systemd service, Type=notify with a watchdog, as user tickwire),
#                    the tickwire CLI, /etc/tickwire/tickwired.toml (a conffile; PREFIX/etc/tickwire
#                    when installed with another prefix)
#   libtickwire0     the shared client library
#   libtickwire-dev  headers, the static library, the CMake package and tickwire.pc
#   tickwire-fix     the FIX gateway (where QuickFIX is built: TW_FIX), its systemd unit (not enabled:
#                    it starts with no session) and /etc/tickwire/fix.toml (a conffile)
# tests/package checks their contents and lintian's verdict on every CI run.
include(GNUInstallDirs)

install(TARGETS tickwired tickwire RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT broker)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/tickwired.service DESTINATION lib/systemd/system COMPONENT broker)
# The broker's configuration goes to /etc/tickwire when the prefix is /usr (the
# Debian package; GNU's rule for /usr) and to PREFIX/etc/tickwire otherwise, so
# that `cmake --install --prefix P` writes nothing outside P. Decided at install
# time, when the prefix is known (cpack installs with its packaging prefix).
install(CODE "
  set(tw_sysconfdir \"\${CMAKE_INSTALL_PREFIX}/etc/tickwire\")
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(tw_sysconfdir /etc/tickwire)
  endif()
  file(INSTALL DESTINATION \"\${tw_sysconfdir}\" TYPE FILE FILES \"${CMAKE_SOURCE_DIR}/packaging/tickwired.toml\")
" COMPONENT broker)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/configuration.md ${CMAKE_SOURCE_DIR}/docs/security.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT broker)
set(tw_components broker lib dev)
if(TARGET tickwire-fix)
  list(APPEND tw_components fix)
  install(TARGETS tickwire-fix RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT fix)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/tickwire-fix.service DESTINATION lib/systemd/system COMPONENT fix)
  install(CODE "
    set(tw_sysconfdir \"\${CMAKE_INSTALL_PREFIX}/etc/tickwire\")
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(tw_sysconfdir /etc/tickwire)
    endif()
    file(INSTALL DESTINATION \"\${tw_sysconfdir}\" TYPE FILE RENAME fix.toml FILES \"${CMAKE_SOURCE_DIR}/packaging/tickwire-fix.toml\")
  " COMPONENT fix)
  install(FILES ${CMAKE_SOURCE_DIR}/docs/fix.md DESTINATION share/doc/tickwire-fix COMPONENT fix)
endif()
# Each package carries the copyright file and a compressed changelog, as Debian policy asks.
set(tw_changelog ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${tw_changelog}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
                   COMMAND gzip -9 -n -c ${CMAKE_SOURCE_DIR}/packaging/changelog > ${tw_changelog}
                   DEPENDS ${CMAKE_SOURCE_DIR}/packaging/changelog)
add_custom_target(tw_package_changelog ALL DEPENDS ${tw_changelog})
foreach(component ${tw_components})
  set(package_name tickwire)
  if(component STREQUAL "lib")
    set(package_name libtickwire0)
  elseif(component STREQUAL "dev")
    set(package_name libtickwire-dev)
  elseif(component STREQUAL "fix")
    set(package_name tickwire-fix)
  endif()
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright DESTINATION share/doc/${package_name} COMPONENT ${component})
  install(FILES ${tw_changelog} DESTINATION share/doc/${package_name} RENAME changelog.gz COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tickwire)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Tickwire maintainers <maintainers@tickwire.invalid>")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before every
# component's description, giving the three packages one summary line; each
# CPACK_DEBIAN_<COMPONENT>_DESCRIPTION below starts with its own.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${tw_components})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_BROKER_PACKAGE_NAME tickwire)
set(CPACK_DEBIAN_BROKER_PACKAGE_DEPENDS "adduser")
# `tickwire perf --transport mqtt|nats` opens these at run time (tools/perf/peer_library.h);
# nothing else in the package needs them, so they are not dependencies.
set(CPACK_DEBIAN_BROKER_PACKAGE_SUGGESTS "libmosquitto1, libnats3.4")
set(CPACK_DEBIAN_BROKER_DESCRIPTION "market-data distribution broker and its command-line client
 Tickwire distributes real-time market data: topic publish/subscribe with
 wildcards, a last-value cache, services with providers and failover,
 conflation and delay, TLS. The package runs tickwired as a systemd service.")
set(CPACK_DEBIAN_BROKER_PACKAGE_CONTROL_EXTRA
    "${CMAKE_SOURCE_DIR}/packaging/deb/postinst;${CMAKE_SOURCE_DIR}/packaging/deb/prerm;${CMAKE_SOURCE_DIR}/packaging/deb/postrm;${CMAKE_SOURCE_DIR}/packaging/deb/conffiles")
set(CPACK_DEBIAN_BROKER_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_LIB_PACKAGE_NAME libtickwire0)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA "${CMAKE_SOURCE_DIR}/packaging/deb/triggers")
set(CPACK_DEBIAN_LIB_DESCRIPTION "Tickwire client library
 The shared library an application links to publish and subscribe through
 a Tickwire broker.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libtickwire-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libtickwire0 (= ${PROJECT_VERSION}), libssl-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "Tickwire client library: development files
 Headers, the static library, a CMake package (find_package(Tickwire)) and
 a pkg-config file for applications using libtickwire.")
# The FIX gateway: QuickFIX comes in through shlibdeps (libquickfix17); the
# service runs as the tickwire user, which the tickwire package creates.
set(CPACK_DEBIAN_FIX_PACKAGE_NAME tickwire-fix)
set(CPACK_DEBIAN_FIX_PACKAGE_DEPENDS "tickwire (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_FIX_DESCRIPTION "FIX order gateway beside the Tickwire broker
 tickwire-fix routes FIX 4.2 and 4.4 orders from client sessions to exchange
 sessions and the executions back (QuickFIX), and publishes every order event
 on the Tickwire broker as a drop copy.")
set(CPACK_DEBIAN_FIX_PACKAGE_CONTROL_EXTRA "${CMAKE_SOURCE_DIR}/packaging/deb/fix/conffiles")
set(CPACK_DEBIAN_FIX_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

