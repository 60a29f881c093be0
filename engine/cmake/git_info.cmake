# Which commit of commatlas this engine is built from, written to OUT (from TEMPLATE) at configure
# time and again at every build (`cmake -P`, the commatlas_git_info target): a build after a new
# commit or an edit records them, where a value read once at configure time stayed with the
# commit the build folder was configured at (the 2-core VM's records said 842702e two sessions
# after it). configure_file rewrites OUT only when its text changes, so an unchanged tree
# recompiles nothing.
#
# The commit is named only when SOURCE_DIR is the top of a git checkout: a copy placed inside
# another repository (a vendored tree, an unpacked sdist in someone's project) would otherwise
# record that repository's commit as ours.
#   cmake -DSOURCE_DIR=... -DTEMPLATE=... -DOUT=... -DVERSION=... [-DGIT_EXECUTABLE=...] -P git_info.cmake
set(COMMATLAS_GIT_SHA "unknown")
set(COMMATLAS_GIT_DIRTY "unknown")
set(COMMATLAS_PROVENANCE "commit unknown: the source tree is not a git checkout of commatlas (version ${VERSION})")
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE _git_top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _git_status)
  if(_git_status EQUAL 0 AND _git_top)
    file(REAL_PATH "${_git_top}" _git_top_real)
    file(REAL_PATH "${SOURCE_DIR}" _source_real)
    if(_git_top_real STREQUAL _source_real)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                      OUTPUT_VARIABLE _git_sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                      OUTPUT_VARIABLE _git_changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_git_sha)
        set(COMMATLAS_GIT_SHA "${_git_sha}")
        if(_git_changes)
          set(COMMATLAS_GIT_DIRTY "true")
          set(COMMATLAS_PROVENANCE "git checkout of commatlas at ${_git_sha} with uncommitted changes")
        else()
          set(COMMATLAS_GIT_DIRTY "false")
          set(COMMATLAS_PROVENANCE "git checkout of commatlas at ${_git_sha}")
        endif()
      endif()
    else()
      set(COMMATLAS_PROVENANCE "commit unknown: the source tree ${_source_real} sits inside another git repository (${_git_top_real}); version ${VERSION}")
    endif()
  endif()
endif()
configure_file(${TEMPLATE} ${OUT} @ONLY)
