# Debian package via CPack: configure with -DCMAKE_INSTALL_PREFIX=/usr, build, then
# `cpack -G DEB` in the build directory (doc/packaging.md).
set(GITLAB_CTL_MAINTAINER "gitlab-ctl maintainers <gitlab-ctl@example.org>" CACHE STRING
    "Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gitlab-ctl)
# A packager's (or the lifecycle test's) version, e.g. 0.1.0-2 for a rebuilt package.
set(GITLAB_CTL_PACKAGE_VERSION "${PROJECT_VERSION}" CACHE STRING "Version of the Debian package")
set(CPACK_PACKAGE_VERSION ${GITLAB_CTL_PACKAGE_VERSION})
set(CPACK_PACKAGE_CONTACT "${GITLAB_CTL_MAINTAINER}")
# The package holds exactly the paths compiled into the binary.
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Omnibus-style runit service launcher for gitlab-exporter")
# CPack puts the summary first and indents this extended description.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "gitlab-ctl reads a gitlab.rb-style configuration, computes each service's
environment (for gitlab-exporter: jemalloc preloaded with MALLOC_CONF and
tuned Ruby garbage collection), renders a runit service tree from templates,
keeps one runsvdir supervising it, and starts, stops, inspects and tails the
services over runit's on-disk protocol.
.
It ships a small bundled gitlab-exporter (Ruby, WEBrick) as the default
payload, and an exec mode to use as a container entrypoint.")
# What no linker sees: the supervisor, the preloaded allocator, the exporter's Ruby and the
# libraries it loads, useradd for the service accounts (passwd is not Essential).
# dpkg-shlibdeps adds the shared libraries the binary links (libconfig9, libbsd0, libc6).
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "runit, libjemalloc2, passwd, ruby, ruby-sinatra, ruby-webrick, ruby-pg, ruby-redis, \
ruby-sidekiq, ruby-connection-pool")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # dpkg-dev, which contrib/debian/build-deb needs anyway
# No curl: readiness checks run in C (`gitlab-ctl probe`).
# Programs of the other catalog services: on by default as in Omnibus, each turned off by its
# enable = false; pre-flight names the package of a missing one.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "postgresql-15, redis-server, prometheus, prometheus-alertmanager, \
prometheus-node-exporter, prometheus-redis-exporter, prometheus-postgres-exporter")
# The Omnibus packages own /usr/bin/gitlab-ctl, /opt/gitlab, /etc/gitlab/gitlab.rb and the
# gitlab-runsvdir unit: never both on one machine. (Conflicts already keeps them apart; an
# unversioned Breaks would add nothing and lintian flags it: breaks-without-version.)
set(CPACK_DEBIAN_PACKAGE_CONFLICTS "gitlab-ce, gitlab-ee")
set(CPACK_DEBIAN_PACKAGE_REPLACES "gitlab-ce, gitlab-ee")
# Maintainer scripts (doc/packaging.md, "Install, boot, upgrade, remove, purge").
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_SOURCE_DIR}/contrib/debian/postinst;\
${CMAKE_CURRENT_SOURCE_DIR}/contrib/debian/prerm;\
${CMAKE_CURRENT_SOURCE_DIR}/contrib/debian/postrm")
# Debian packages keep out of /opt: the package leaves out the embedded/bin link, which
# reconfigure creates at run time anyway.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified)

# Timestamps in the .deb come from SOURCE_DATE_EPOCH; default it to the last commit's time so
# that two `cpack` runs of one tree give identical packages.
find_package(Git QUIET)
set(GITLAB_CTL_SOURCE_DATE_EPOCH "")
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(GITLAB_CTL_SOURCE_DATE_EPOCH "$ENV{SOURCE_DATE_EPOCH}")
elseif(GIT_FOUND AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%ct
                  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                  OUTPUT_VARIABLE GITLAB_CTL_SOURCE_DATE_EPOCH
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/CPackProjectConfig.cmake.in
               ${CMAKE_CURRENT_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_BINARY_DIR}/CPackProjectConfig.cmake)

include(CPack)
