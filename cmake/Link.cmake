# gitlab-ctl's own link, as GITLAB_CTL_LINK says (README: Build options):
#   shared         libconfig, libbsd and libmd as shared objects (what a distribution that
#                  wants every library shared picks); libconfig is loaded when first needed;
#   compat-static  libbsd and libmd from their archives, libconfig shared (the default);
#   deps-static    all three from their archives, libc shared;
#   static         one static PIE, libc included: nothing is loaded at run time.
# The archives are the ones pkg-config --static names, found beside the shared ones.

function(gitlab_ctl_archives out)
  set(_found)
  foreach(_lib IN LISTS ARGN)
    find_library(GITLAB_CTL_ARCHIVE_${_lib} NAMES lib${_lib}.a
                 HINTS ${LIBCONFIG_STATIC_LIBRARY_DIRS} ${LIBBSD_STATIC_LIBRARY_DIRS})
    if(NOT GITLAB_CTL_ARCHIVE_${_lib})
      message(FATAL_ERROR
              "GITLAB_CTL_LINK=${GITLAB_CTL_LINK}: lib${_lib}.a not found (install its -dev package)")
    endif()
    list(APPEND _found ${GITLAB_CTL_ARCHIVE_${_lib}})
  endforeach()
  list(REMOVE_DUPLICATES _found)
  set(${out} ${_found} PARENT_SCOPE)
endfunction()

if(GITLAB_CTL_LINK STREQUAL "shared")
  target_link_libraries(gitlab-ctl PRIVATE PkgConfig::LIBCONFIG PkgConfig::LIBBSD)
elseif(GITLAB_CTL_LINK STREQUAL "compat-static")
  gitlab_ctl_archives(_archives ${LIBBSD_STATIC_LIBRARIES})
  target_link_libraries(gitlab-ctl PRIVATE PkgConfig::LIBCONFIG ${_archives})
else()
  gitlab_ctl_archives(_archives ${LIBCONFIG_STATIC_LIBRARIES} ${LIBBSD_STATIC_LIBRARIES})
  target_link_libraries(gitlab-ctl PRIVATE ${_archives})
endif()

if(GITLAB_CTL_LINK STREQUAL "static")
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_LINK_OPTIONS -static-pie)
  check_c_source_compiles("int main(void) { return 0; }" GITLAB_CTL_HAVE_STATIC_PIE)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT GITLAB_CTL_HAVE_STATIC_PIE)
    message(FATAL_ERROR "GITLAB_CTL_LINK=static: the C compiler cannot link -static-pie "
                        "(it needs libc's static archive: install libc6-dev)")
  endif()
  set_target_properties(gitlabctl gitlab-ctl PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_options(gitlab-ctl PRIVATE -static-pie)
  # glibc's linker notes that getpwnam & co. load NSS modules at run time: launcher/lib/nss.c
  # restricts them to the sources a static glibc carries built in.
  message(STATUS "gitlab-ctl: static PIE (the linker's getpwnam/getaddrinfo notes are expected)")
elseif(_archives)
  message(STATUS "gitlab-ctl: GITLAB_CTL_LINK=${GITLAB_CTL_LINK} (archived: ${_archives})")
else()
  message(STATUS "gitlab-ctl: GITLAB_CTL_LINK=${GITLAB_CTL_LINK}")
endif()
