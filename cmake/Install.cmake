# Install layout and the Debian package (CPack), included from CMakeLists.txt.
#
#   <bindir>/gitlab-ctl
#   <GITLAB_CTL_PKGDATADIR>/{sv/*.conf,templates/,exporter/}   found by the binary at run time
#   <GITLAB_CTL_INSTALL_DIR>/embedded/bin/gitlab-exporter      -> the bundled exporter (symlink)
#   <GITLAB_CTL_SYSTEMD_UNIT_DIR>/gitlab-runsvdir.service
#   <mandir>/man8/gitlab-ctl.8.gz
#   <datadir>/bash-completion/completions/gitlab-ctl
#   <docdir>/{copyright,changelog.gz,examples/gitlab.rb}
#
# The binary looks for its catalog and templates first at the data dir's place relative to
# itself (<bindir>/../share/gitlab-ctl), then, in a build tree, at the `gitlab-ctl-data` link
# CMake puts next to it, then at the compiled-in GITLAB_CTL_PKGDATADIR. So with the default data
# dir everything but the embedded/bin link follows `cmake --install --prefix DIR`, and an install
# into any root-owned prefix (the demo's and the tests') runs without GITLAB_CTL_DATADIR.
# GITLAB_CTL_INSTALL_DIR (the embedded/bin link, component "embedded") stays absolute, and is
# installed only when the install prefix is the configured one: `--prefix DIR` stays inside DIR.

set(GITLAB_CTL_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where the gitlab-runsvdir.service systemd unit is installed (relative: below the prefix)")
if(GITLAB_CTL_PKGDATADIR STREQUAL "${CMAKE_INSTALL_FULL_DATADIR}/gitlab-ctl")
  set(_pkgdata_dest "${CMAKE_INSTALL_DATADIR}/gitlab-ctl")
else()
  set(_pkgdata_dest "${GITLAB_CTL_PKGDATADIR}")
endif()
# The build tree's binary finds the source tree's catalog through this link (never compiled in).
file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}" "${CMAKE_CURRENT_BINARY_DIR}/gitlab-ctl-data" SYMBOLIC)
option(GITLAB_CTL_INSTALL_EMBEDDED
       "Install <GITLAB_CTL_INSTALL_DIR>/embedded/bin/gitlab-exporter, a link to the bundled exporter" ON)

install(TARGETS gitlab-ctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(CMAKE_OBJCOPY)
  # A stripped install (cpack, --strip) also drops the compiler's .comment, as dh_strip does.
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --remove-section=.comment
                      \"\$ENV{DESTDIR}${CMAKE_INSTALL_FULL_BINDIR}/gitlab-ctl\")
    endif()")
endif()
install(DIRECTORY sv/ DESTINATION ${_pkgdata_dest}/sv FILES_MATCHING PATTERN "*.conf"
        PATTERN "omnibus-names.list")
install(DIRECTORY templates/ DESTINATION ${_pkgdata_dest}/templates)
# reconfigure links <root>/opt/gitlab/embedded/bin/gitlab-exporter here.
install(PROGRAMS exporter/gitlab-exporter DESTINATION ${_pkgdata_dest}/exporter)

if(GITLAB_CTL_INSTALL_EMBEDDED)
  # A link, not a copy: one exporter to upgrade. Absolute, as it crosses top-level directories.
  # Only into the configured prefix (a system install, a package's DESTDIR): `--prefix DIR`
  # writes nothing outside DIR, and reconfigure makes this link in its own root anyway.
  install(CODE "
    set(_link \"\$ENV{DESTDIR}${GITLAB_CTL_INSTALL_DIR}/embedded/bin/gitlab-exporter\")
    if(NOT \"\${CMAKE_INSTALL_PREFIX}\" STREQUAL \"${CMAKE_INSTALL_PREFIX}\")
      message(STATUS \"Skipping: \${_link} (outside --prefix \${CMAKE_INSTALL_PREFIX}; reconfigure links it)\")
    else()
      file(MAKE_DIRECTORY \"\$ENV{DESTDIR}${GITLAB_CTL_INSTALL_DIR}/embedded/bin\")
      message(STATUS \"Installing: \${_link}\")
      file(REMOVE \"\${_link}\")
      file(CREATE_LINK \"${GITLAB_CTL_PKGDATADIR}/exporter/gitlab-exporter\" \"\${_link}\" SYMBOLIC)
      list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_link}\")
    endif()"
    COMPONENT embedded)
endif()

# The unit runs the installed binary: etc/gitlab-runsvdir.service.in names @GITLAB_CTL_BINARY@.
set(GITLAB_CTL_BINARY "${CMAKE_INSTALL_FULL_BINDIR}/gitlab-ctl")
configure_file(etc/gitlab-runsvdir.service.in gitlab-runsvdir.service @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gitlab-runsvdir.service
        DESTINATION ${GITLAB_CTL_SYSTEMD_UNIT_DIR})

# Documentation. Debian wants man pages and changelogs gzip -9n: -n leaves out the name and
# time stamp, so the output depends on the input only (reproducible).
find_program(GZIP_EXECUTABLE gzip REQUIRED)
set(_docs ${CMAKE_CURRENT_BINARY_DIR}/doc)
add_custom_command(OUTPUT ${_docs}/gitlab-ctl.8.gz ${_docs}/changelog.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_docs}
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/doc/gitlab-ctl.8 ${_docs}/gitlab-ctl.8
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/contrib/debian/changelog
          ${_docs}/changelog
  COMMAND ${GZIP_EXECUTABLE} -9nf ${_docs}/gitlab-ctl.8 ${_docs}/changelog
  DEPENDS doc/gitlab-ctl.8 contrib/debian/changelog
  VERBATIM)
add_custom_target(docs ALL DEPENDS ${_docs}/gitlab-ctl.8.gz ${_docs}/changelog.gz)

install(FILES ${_docs}/gitlab-ctl.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES contrib/bash-completion/gitlab-ctl
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES contrib/debian/copyright ${_docs}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES etc/gitlab.rb DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The template postinst copies to /etc/gitlab/gitlab.rb and diff-config compares with: outside
# /usr/share/doc, which images often leave out (dpkg path-exclude).
install(FILES etc/gitlab.rb DESTINATION ${_pkgdata_dest}/etc)
install(FILES contrib/debian/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME gitlab-ctl)

# The packaged changelog must describe this version.
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/contrib/debian/changelog _changelog_head LIMIT_COUNT 1)
if(NOT _changelog_head MATCHES "^gitlab-ctl \\(${PROJECT_VERSION}\\) ")
  message(WARNING "contrib/debian/changelog does not start with version ${PROJECT_VERSION}")
endif()

include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/Packaging.cmake)
