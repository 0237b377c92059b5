# trawl_glob(): the end of the configure, deferred to the end of the top
# directory: the cache for the queries used, and the re-check at build time
# (cmake/Trawl.cmake, docs/cmake.md). What the re-check watches is trawl's
# to say (`trawl check --depfile`, the list the Meson plugin uses too): the
# module computes none of its own.

# OUT = the paths the depfile FILE (`trawl check --depfile`) lists after its
# target, unescaped.
function(_trawl_depfile_read out file)
  file(STRINGS "${file}" lines)
  list(REMOVE_AT lines 0)   # the target
  set(paths "")
  foreach(l IN LISTS lines)
    string(REGEX REPLACE "^ +" "" l "${l}")
    string(REGEX REPLACE " \\\\$" "" l "${l}")
    string(REPLACE "\\ " " " l "${l}")
    string(REPLACE "\\#" "#" l "${l}")
    string(REPLACE "$$" "$" l "${l}")
    list(APPEND paths "${l}")
  endforeach()
  set(${out} "${paths}" PARENT_SCOPE)
endfunction()

# Every target of directory DIR and the directories below it that can
# depend on another (not imported, not an alias, not INTERFACE).
function(_trawl_all_targets out dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  set(found "")
  foreach(t IN LISTS targets)
    get_target_property(type "${t}" TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      list(APPEND found "${t}")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(d IN LISTS subdirs)
    _trawl_all_targets(more "${d}")
    list(APPEND found ${more})
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

function(_trawl_finish)
  _trawl_state(state)
  set_property(GLOBAL PROPERTY _TRAWL_FINISHED TRUE)
  get_property(problems GLOBAL PROPERTY _TRAWL_PREFETCH_PROBLEMS)

  # The queries of the calls without CONFIGURE_DEPENDS, for the next
  # configure to ask first, in one process (_trawl_prefetch).
  get_property(used GLOBAL PROPERTY _TRAWL_USED_configure)
  get_property(prefetched GLOBAL PROPERTY _TRAWL_PREFETCHED_configure)
  if(NOT "${used}" STREQUAL "${prefetched}")
    _trawl_write_queries("${state}/configure-queries.jsonl" ${used})
    file(WRITE "${state}/configure-queries.cmake" "set(_TRAWL_PREV_KEYS ${used})\n")
  endif()

  set(make FALSE)
  if(CMAKE_GENERATOR MATCHES "Makefiles$" AND NOT CMAKE_HOST_WIN32)
    set(make TRUE)
  endif()

  # A configure whose every call with CONFIGURE_DEPENDS the memo gave: the
  # queries, the cache and what to watch are the previous configure's
  # (memo.cmake).
  _trawl_memo_same(memo_same)
  if(memo_same)
    if(NOT "${problems}" STREQUAL "")
      message(WARNING "trawl_glob: ${problems}")
    endif()
  else()
    # The calls answered by file() for now, answered by trawl (one process).
    _trawl_verify(same)
    get_property(problems GLOBAL PROPERTY _TRAWL_PREFETCH_PROBLEMS)

    get_property(used GLOBAL PROPERTY _TRAWL_USED_recheck)
    get_property(prefetched GLOBAL PROPERTY _TRAWL_PREFETCHED_recheck)
    if(NOT used)
      if(prefetched)
        file(WRITE "${state}/queries.cmake" "set(_TRAWL_PREV_KEYS)\n")
      endif()
      if(NOT "${problems}" STREQUAL "")
        message(WARNING "trawl_glob: ${problems}")
      endif()
      return()
    endif()

    # The cache must hold the answers this configure used. The prefetch wrote
    # it for the previous configure's queries; if this one asked others, ask
    # them all again with the cache, and compare.
    set(stale FALSE)
    set(answers "${state}/prefetch-recheck.cmake")
    if(NOT same)
      message(WARNING "trawl_glob: files changed while CMake was configuring; the next build "
        "re-configures.")
      set(stale TRUE)
    endif()
    if(NOT "${used}" STREQUAL "${prefetched}")
      foreach(key IN LISTS used)
        get_property(r GLOBAL PROPERTY _TRAWL_R_${key})
        get_property(nu GLOBAL PROPERTY _TRAWL_N_${key})
        set(was_${key} "${r}")
        set(was_n_${key} "${nu}")
      endforeach()
      _trawl_batch(ok err final "${state}/cache" ${used})
      if(NOT ok)
        message(WARNING "trawl_glob: trawl batch --cache failed; the next build re-configures:\n"
          "${err}")
        set(stale TRUE)
      else()
        if(NOT "${err}" STREQUAL "")
          set(problems "${err}")
        endif()
        foreach(key IN LISTS used)
          get_property(r GLOBAL PROPERTY _TRAWL_R_${key})
          get_property(nu GLOBAL PROPERTY _TRAWL_N_${key})
          if(NOT "${r}" STREQUAL "${was_${key}}" OR NOT "${nu}" STREQUAL "${was_n_${key}}")
            set(stale TRUE)
          endif()
        endforeach()
        if(stale AND same)
          message(WARNING "trawl_glob: files changed while CMake was configuring; the next build "
            "re-configures.")
        endif()
        file(RENAME "${state}/final.jsonl" "${state}/queries.jsonl")
        set(answers "${state}/final.cmake")
      endif()
    endif()
    if(stale)
      file(REMOVE "${state}/cache" "${state}/checked" "${state}/queries.jsonl")
    endif()
    file(WRITE "${state}/queries.cmake" "set(_TRAWL_PREV_KEYS ${used})\n")

    if(NOT "${problems}" STREQUAL "")
      message(WARNING "trawl_glob: ${problems}")
    endif()

    # The memo for the next configure, valid for the answers the cache now
    # holds; none when they are not the ones this configure used.
    if(stale)
      file(REMOVE "${state}/calls.digest")
    else()
      _trawl_memo_write("${answers}")
    endif()
  endif()

  _trawl_executable(exe)
  set(stamp "${state}/stamp")
  set(checked "${state}/checked")
  if(NOT EXISTS "${stamp}")
    file(TOUCH "${stamp}")
  endif()
  # What the re-check watches is written by the check itself (`trawl check
  # --depfile`): every directory the cache recorded, the ignore files in them
  # and the sources outside the walks (docs/cache.md). The cache may have
  # been written by this configure, so the list is made again: the first
  # build after a configure runs the check.
  file(REMOVE "${state}/watch.d")
  if("${CMAKE_GENERATOR}" MATCHES "^Ninja")
    # Ninja: the re-check runs when a watched path is newer than the last
    # check, or gone (a depfile names them); it touches the stamp only when
    # an answer changed, and build.ninja depends on the stamp: a change
    # re-configures and the build goes on with the new build files, in the
    # same run. Beyond 2,000 watched paths (the Meson plugin's figure: Ninja
    # 1.11 stats every one on every build, and reads the depfile in time
    # quadratic in its length) the depfile names a path that is never there,
    # and the check runs on every build. The mark is named relative to the
    # build directory, as Ninja names the output the depfile is for.
    # Exit 1 is "an answer changed, the stamp is touched": not a failure.
    # (No ';' in a COMMAND argument: CMake would split it.)
    add_custom_command(OUTPUT "${checked}"
      COMMAND sh -c "\"$0\" check --checked \"$1\" --depfile \"$2\" --watch-limit 2000 --touch \"$3\" --cache \"$4\" || test $? -eq 1"
        "${exe}" CMakeFiles/trawl/checked CMakeFiles/trawl/watch.d "${stamp}" "${state}/cache"
      DEPFILE "${state}/watch.d"
      WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
      COMMENT "trawl: re-checking the globs" VERBATIM)
    # A separate edge for the stamp: its restat must not cover the check's
    # own output (Ninja would then record the watched paths' times after
    # the check, and miss a change made while it ran). It runs after every
    # check (Ninja runs an edge whose input was rewritten; restat then keeps
    # build.ninja from re-running when the stamp did not change), so its
    # line says what it does either way.
    add_custom_command(OUTPUT "${stamp}" DEPENDS "${checked}" COMMAND true
      COMMENT "trawl: handing any change of the lists to CMake" VERBATIM)
    # The target gives the two commands their rules; it is not part of
    # ALL: Ninja reaches them through build.ninja first, and a second path
    # from the build's own targets ran the check twice whenever it runs
    # every time (beyond the limit, the never-there path is still missing
    # after the manifest's turn).
    add_custom_target(trawl_glob_check DEPENDS "${stamp}" "${checked}")
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${stamp}")
  elseif(make)
    # Make: the generator's own check of the build files runs before any
    # target and cannot be made to wait for ours. So the re-check is a
    # target every other target depends on; when an answer changed it
    # re-configures right there, and the targets built after it in this run
    # read the new build files (each target's build.make is read when the
    # target is built). The stamp is a configure dependency too, so that a
    # re-configure cut short is done by the next build.
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${stamp}")
    add_custom_target(trawl_glob_check ALL
      COMMAND sh -c "\"$0\" check --touch \"$1\" --cache \"$2\" && exit 0 || test $? -eq 1 && \"$3\" -S \"$4\" -B \"$5\""
        "${exe}" "${stamp}" "${state}/cache" "${CMAKE_COMMAND}" "${CMAKE_SOURCE_DIR}"
        "${CMAKE_BINARY_DIR}"
      VERBATIM)   # no COMMENT: with Make it is one more `cmake -E` process a build
    _trawl_all_targets(targets "${CMAKE_SOURCE_DIR}")
    foreach(t IN LISTS targets)
      if(NOT t STREQUAL "trawl_glob_check")
        add_dependencies("${t}" trawl_glob_check)
      endif()
    endforeach()
  else()
    # Other generators: every watched path is a configure dependency (the
    # check's list, asked for now); any change to a watched directory
    # re-configures, from the cache.
    execute_process(COMMAND "${exe}" check --checked "${state}/configured"
      --depfile "${state}/configured.d" --cache "${state}/cache"
      OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE rc)
    set(watch "")
    if(EXISTS "${state}/configured.d")
      _trawl_depfile_read(watch "${state}/configured.d")
    endif()
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
      "${stamp}" ${watch})
  endif()
endfunction()
