# trawl_glob(): the end of the configure, deferred to the end of the top
# directory: the cache for the queries used, the paths to watch, the
# re-check at build time (cmake/Trawl.cmake, docs/cmake.md).

# Ninja's depfile reader, in one place: _trawl_depfile_bad(VAR) sets VAR to a
# regex of the bytes no escape carries (a path holding one is watched
# another way), and _trawl_depfile_escape(VAR) escapes the rest in variable
# VAR. (Macros: a variable set where this file is included would not be
# seen by a caller in another directory.)
macro(_trawl_depfile_bad var)
  string(ASCII 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
         31 127 _trawl_ctl)
  set(${var} "[\"&'*<>?\\\\^`|${_trawl_ctl}]")
endmacro()
macro(_trawl_depfile_escape var)
  string(REPLACE "$" "$$" ${var} "${${var}}")
  string(REPLACE " " "\\ " ${var} "${${var}}")
  string(REPLACE "#" "\\#" ${var} "${${var}}")
endmacro()

# The paths of list PATHS as depfile text (each after " \\\n  "), at once;
# OK_VAR = FALSE if one of them cannot be written there.
function(_trawl_depfile_all out ok_var paths)
  set(${out} "" PARENT_SCOPE)
  if("${paths}" STREQUAL "")
    return()
  endif()
  _trawl_depfile_bad(bad)
  if("${paths}" MATCHES "${bad}" OR "${paths}" MATCHES ":(;|$)")
    set(${ok_var} FALSE PARENT_SCOPE)
    return()
  endif()
  # No ';' inside a path here (the list would not have carried it).
  set(text "${paths}")
  _trawl_depfile_escape(text)
  string(REPLACE ";" " \\\n  " text "${text}")
  set(${out} " \\\n  ${text}" PARENT_SCOPE)
endfunction()

# Append PATH to the depfile text in variable VAR, escaped as Ninja's
# depfile reader wants it; OK_VAR = FALSE if it cannot be written there.
function(_trawl_depfile_append var ok_var path)
  _trawl_depfile_bad(bad)
  if("${path}" MATCHES "${bad}" OR "${path}" MATCHES "[;]" OR "${path}" MATCHES ":$")
    set(${ok_var} FALSE PARENT_SCOPE)
    return()
  endif()
  _trawl_depfile_escape(path)
  set(${var} "${${var}} \\\n  ${path}" PARENT_SCOPE)
endfunction()

# The files and directories outside the walks that decide what git ignores
# below ROOT (trawl records them in the cache; docs/cache.md), appended to
# the global list _TRAWL_WATCHING: the ignore files of ROOT's ancestors up to
# the work tree's top and those directories, the top's info/exclude and
# config, git's global config and excludes files (core.excludesFile as git
# reports it from the top, relative to it as trawl reads it). One that does
# not exist is watched through the nearest directory above it that does.
# Each directory and each top is looked at once a configure, however many
# roots share it (a glob per directory: thousands).
function(_trawl_ignore_sources root)
  set(dir "${root}")
  set(top "")
  while(TRUE)
    get_property(seen GLOBAL PROPERTY "_TRAWL_ISEEN_${dir}")
    if(seen)
      return()   # and so was the way on up
    endif()
    set_property(GLOBAL PROPERTY "_TRAWL_ISEEN_${dir}" TRUE)
    set_property(GLOBAL APPEND PROPERTY _TRAWL_WATCHING "${dir}")
    foreach(f .gitignore .ignore)
      if(EXISTS "${dir}/${f}")
        set_property(GLOBAL APPEND PROPERTY _TRAWL_WATCHING "${dir}/${f}")
      endif()
    endforeach()
    if(EXISTS "${dir}/.git")
      set(top "${dir}")
      break()
    endif()
    get_filename_component(up "${dir}" DIRECTORY)
    if("${up}" STREQUAL dir OR "${up}" STREQUAL "")
      break()
    endif()
    set(dir "${up}")
  endwhile()
  set(candidates "")
  if(top)
    list(APPEND candidates "${top}/.git/info/exclude" "${top}/.git/config")
  endif()
  set(xdg "$ENV{XDG_CONFIG_HOME}")
  if("${xdg}" STREQUAL "")
    set(xdg "$ENV{HOME}/.config")
  endif()
  list(APPEND candidates "${xdg}/git/ignore" "${xdg}/git/config" "$ENV{HOME}/.gitconfig"
       "/etc/gitconfig")
  if(NOT "$ENV{GIT_CONFIG_GLOBAL}" STREQUAL "")
    list(APPEND candidates "$ENV{GIT_CONFIG_GLOBAL}")
  endif()
  find_program(_TRAWL_GIT git)
  if(_TRAWL_GIT)
    set(from "${top}")
    if(NOT top)
      set(from "${root}")
    endif()
    execute_process(COMMAND "${_TRAWL_GIT}" config --path --get core.excludesFile
      WORKING_DIRECTORY "${from}" OUTPUT_VARIABLE excludes OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND NOT "${excludes}" STREQUAL "")
      if(NOT IS_ABSOLUTE "${excludes}")
        set(excludes "${from}/${excludes}")
      endif()
      list(APPEND candidates "${excludes}")
    endif()
  endif()
  foreach(f IN LISTS candidates)
    while(NOT EXISTS "${f}")
      get_filename_component(up "${f}" DIRECTORY)
      if("${up}" STREQUAL f OR "${up}" STREQUAL "")
        break()
      endif()
      set(f "${up}")
    endwhile()
    if(EXISTS "${f}")
      set_property(GLOBAL APPEND PROPERTY _TRAWL_WATCHING "${f}")
    endif()
  endforeach()
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
    include("${state}/watch.cmake")
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

    # What to watch: the root of every query, and every directory the watch
    # queries found below theirs; with GITIGNORE, ignore files too. (Make
    # re-checks on every build and watches nothing.)
    # (Gathered in a global property, appended to in place: a variable
    # that grows a path at a time is copied whole every time, and a
    # configure may glob thousands of directories.)
    set(depfile "")
    set(depfile_ok TRUE)
    set_property(GLOBAL PROPERTY _TRAWL_WATCHING "")
    foreach(key IN LISTS used)
      if(make)
        break()
      endif()
      get_property(root GLOBAL PROPERTY _TRAWL_ROOT_${key})
      set_property(GLOBAL APPEND PROPERTY _TRAWL_WATCHING "${root}")
      get_property(ign GLOBAL PROPERTY _TRAWL_IGNORE_${key})
      if(ign)
        _trawl_ignore_sources("${root}")
      endif()
      get_property(w GLOBAL PROPERTY _TRAWL_WATCH_${key})
      if(NOT w)
        continue()
      endif()
      get_property(dirs GLOBAL PROPERTY _TRAWL_R_${key})
      if(NOT "${dirs}" STREQUAL "")
        list(TRANSFORM dirs PREPEND "${root}/")
        set_property(GLOBAL APPEND PROPERTY _TRAWL_WATCHING ${dirs})
      endif()
      get_property(nu GLOBAL PROPERTY _TRAWL_N_${key})
      if(nu GREATER 0)
        # A directory a list cannot carry: only the depfile can name it.
        foreach(j RANGE 1 ${nu})
          get_property(u GLOBAL PROPERTY _TRAWL_U_${key}_${j})
          _trawl_depfile_append(depfile depfile_ok "${root}/${u}")
          get_filename_component(parent "${root}/${u}" DIRECTORY)
          set_property(GLOBAL APPEND PROPERTY _TRAWL_WATCHING "${parent}")
        endforeach()
      endif()
    endforeach()
    get_property(watch GLOBAL PROPERTY _TRAWL_WATCHING)
    list(REMOVE_DUPLICATES watch)
    if(NOT "${problems}" STREQUAL "")
      message(WARNING "trawl_glob: ${problems}")
    endif()

    # The memo for the next configure, valid for the answers the cache now
    # holds; none when they are not the ones this configure used.
    if(stale)
      file(REMOVE "${state}/calls.digest")
    else()
      _trawl_memo_write("${answers}" "${watch}" "${depfile}" ${depfile_ok})
    endif()
  endif()

  _trawl_executable(exe)
  set(stamp "${state}/stamp")
  set(checked "${state}/checked")
  if(NOT EXISTS "${stamp}")
    file(TOUCH "${stamp}")
  endif()
  if("${CMAKE_GENERATOR}" MATCHES "^Ninja")
    # Ninja: the re-check runs when a watched path is newer than the last
    # check (a depfile names them, so that one that disappears is no error);
    # it touches the stamp only when an answer changed, and build.ninja
    # depends on the stamp: a change re-configures and the build goes on
    # with the new build files, in the same run.
    #
    # Ninja 1.11 reads a depfile in time quadratic in its length (each path
    # is looked for among the ones before it): 38,000 paths cost 1.4 s a
    # build. So beyond shard_size paths the list is split, each part on an
    # edge of its own that only leaves a mark (`trawl check --checked`, no
    # cache) when one of its paths changed, and the check depends on the
    # marks.
    set(shard_size 1000)
    file(GLOB old "${state}/watch-*.d")
    if(old)
      file(REMOVE ${old})
    endif()
    list(LENGTH watch n_watch)
    set(inputs "")
    if(n_watch GREATER shard_size)
      set(start 0)
      set(k 0)
      while(start LESS n_watch AND depfile_ok)
        list(SUBLIST watch ${start} ${shard_size} part)
        _trawl_depfile_all(text depfile_ok "${part}")
        math(EXPR k "${k} + 1")
        if(k EQUAL 1)
          string(APPEND text "${depfile}")   # the directories no list carries
        endif()
        file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${state}/watched-${k}")
        file(WRITE "${state}/watch-${k}.d" "${rel}:${text}\n")
        list(APPEND inputs "${state}/watched-${k}")
        math(EXPR start "${start} + ${shard_size}")
      endwhile()
    else()
      _trawl_depfile_all(text depfile_ok "${watch}")
      file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${checked}")
      file(WRITE "${state}/watch.d" "${rel}:${text}${depfile}\n")
    endif()
    # Exit 1 is "an answer changed, the stamp is touched": not a failure.
    # (No ';' in a COMMAND argument: CMake would split it.)
    set(command sh -c "\"$0\" check --checked \"$1\" --touch \"$2\" --cache \"$3\" || test $? -eq 1"
        "${exe}" "${checked}" "${stamp}" "${state}/cache")
    if(depfile_ok)
      set(output "${checked}")
      if(NOT "${inputs}" STREQUAL "")
        set(k 0)
        foreach(mark IN LISTS inputs)
          math(EXPR k "${k} + 1")
          add_custom_command(OUTPUT "${mark}" COMMAND "${exe}" check --checked "${mark}"
            DEPFILE "${state}/watch-${k}.d" VERBATIM)
        endforeach()
        add_custom_command(OUTPUT "${checked}" COMMAND ${command} DEPENDS ${inputs}
          COMMENT "trawl: re-checking the globs" VERBATIM)
      else()
        add_custom_command(OUTPUT "${checked}" COMMAND ${command}
          DEPFILE "${state}/watch.d"
          COMMENT "trawl: re-checking the globs" VERBATIM)
      endif()
    else()
      # A watched path the depfile cannot name: check on every build.
      message(STATUS "trawl_glob: a watched path has a name a depfile cannot hold; "
        "the globs are re-checked on every build")
      set(output "${state}/always-check")
      add_custom_command(OUTPUT "${output}" BYPRODUCTS "${checked}" COMMAND ${command}
        COMMENT "trawl: re-checking the globs" VERBATIM)
      set_source_files_properties("${output}" PROPERTIES SYMBOLIC TRUE)
    endif()
    # A separate edge for the stamp: its restat must not cover the check's
    # own output (Ninja would then record the watched paths' times after
    # the check, and miss a change made while it ran).
    # (It depends on the mark, which every check rewrites: a symbolic output
    # does not exist before or after, so Ninja's restat would skip it.)
    # It runs after every check (Ninja runs an edge whose input was rewritten;
    # restat then keeps build.ninja from re-running when the stamp did not
    # change), so its line says what it does either way.
    add_custom_command(OUTPUT "${stamp}" DEPENDS "${checked}" COMMAND true
      COMMENT "trawl: handing any change of the lists to CMake" VERBATIM)
    add_custom_target(trawl_glob_check ALL DEPENDS "${stamp}" "${output}")
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
    # Other generators: every watched path is a configure dependency; any
    # change to a watched directory re-configures (from the cache).
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
      "${stamp}" ${watch})
  endif()
endfunction()
