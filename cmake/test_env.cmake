# cmake/test_env.cmake: the private environment of one ctest run (the fixture of every test;
# CMakeLists.txt sets the variables that point into it).
#   cmake -DACTION=setup -DDIR=<dir> -P test_env.cmake    an empty <dir> with cache/ and tmp/
#   cmake -DACTION=cleanup -DDIR=<dir> -P test_env.cmake  removes <dir>; fails, naming them,
#                                                          when tests left files in <dir>/tmp
if(NOT DIR)
  message(FATAL_ERROR "test_env.cmake: DIR is not set")
endif()
if(ACTION STREQUAL "setup")
  # A run that was interrupted left its environment: start from an empty one.
  file(REMOVE_RECURSE ${DIR})
  file(MAKE_DIRECTORY ${DIR}/cache ${DIR}/xdg-cache ${DIR}/xdg-config ${DIR}/tmp)
  message(STATUS "test environment: ${DIR} (kernel caches, TMPDIR)")
elseif(ACTION STREQUAL "cleanup")
  file(GLOB left RELATIVE ${DIR}/tmp LIST_DIRECTORIES true ${DIR}/tmp/* ${DIR}/tmp/.*)
  # Nsight Compute keeps its own working folder in TMPDIR (`nvidia`, from `profile` under
  # the GPU lane): a tool's, not a test's, and removed with the rest.
  list(REMOVE_ITEM left . .. nvidia)
  file(REMOVE_RECURSE ${DIR})
  if(left)
    list(JOIN left ", " names)
    message(FATAL_ERROR "tests left files in their TMPDIR (${DIR}/tmp): ${names}")
  endif()
  message(STATUS "test environment removed: ${DIR}")
else()
  message(FATAL_ERROR "test_env.cmake: ACTION must be setup or cleanup, not '${ACTION}'")
endif()
