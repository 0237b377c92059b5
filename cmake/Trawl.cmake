# trawl_glob(): file(GLOB) and file(GLOB_RECURSE) answered by trawl, whose
# CONFIGURE_DEPENDS re-check costs a few stats instead of a walk.
#
#   include(<trawl checkout>/cmake/Trawl.cmake)     # or find_package(Trawl CONFIG)
#   trawl_glob(srcs GLOB_RECURSE CONFIGURE_DEPENDS src/*.c)
#
# docs/cmake.md is the guide; this file is the implementation. Its shape:
#
#  * Each glob expression is cut the way CMake's cmsys::Glob cuts it (the
#    directory before the first wildcard, then one pattern per component),
#    its components translated into the trawl dialect (GLOB_RECURSE puts
#    "**" before the last one), and asked as queries of `trawl batch
#    --format cmake`, whose answers come back as a CMake script of bracket
#    arguments: no file name is ever evaluated.
#  * Every query of a configure that has CONFIGURE_DEPENDS goes into one
#    `trawl batch --cache` file per build directory. The next configure asks
#    all of the previous one's queries in one process first (answered from
#    the cache's records when nothing changed); a call whose queries are
#    new runs its own. At the end of the configure, the cache is rewritten
#    for the queries used, and if an answer differs from the one the
#    configure used (the tree changed meanwhile) the next build re-configures.
#  * The re-check at build time is one `trawl check` for the whole build
#    directory. Ninja runs it only when a directory or ignore file it watches
#    is newer than the last check (the depfile the check itself writes, the
#    one list the Meson plugin uses too), and it touches a
#    stamp that build.ninja depends on only when an answer changed: a new
#    source is compiled in the same ninja run, and a no-op build is
#    "ninja: no work to do". Make runs it before every target, and
#    re-configures there when an answer changed.
#
# The parts, in cmake/trawl/: text.cmake (JSON and messages),
# translate.cmake (cutting and translating CMake globs), executable.cmake
# (finding or compiling trawl), queries.cmake (asking trawl batch, the
# cache, the calls answered by file() until the end), memo.cmake (the lists
# of the previous configure's calls), plan.cmake (a call's globs as
# queries, its result), recheck.cmake (the end of the configure: the cache,
# what to watch, the build edges).

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "trawl_glob() needs CMake 3.20 or newer (this is ${CMAKE_VERSION})")
endif()

cmake_policy(PUSH)
cmake_policy(VERSION 3.20...3.25)
# The depfile of the re-check names its output as build.ninja does; CMake
# must not rewrite it (CMP0116 NEW would, with a `cmake -E` run per check).
cmake_policy(SET CMP0116 OLD)

# Where this file is, for the functions below whichever scope calls them.
set_property(GLOBAL PROPERTY _TRAWL_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

foreach(_trawl_part text translate executable queries memo plan recheck)
  include("${CMAKE_CURRENT_LIST_DIR}/trawl/${_trawl_part}.cmake")
endforeach()
unset(_trawl_part)

# ---------------------------------------------------------------------------
# ---------------------------------------------------------------------------
# trawl_glob(<var> GLOB|GLOB_RECURSE [LIST_DIRECTORIES <bool>] [RELATIVE <dir>]
#            [FOLLOW_SYMLINKS] [CONFIGURE_DEPENDS] <globs>...
#            [PATTERNS <trawl patterns>...] [EXCLUDE <trawl patterns>...]
#            [ROOT <dir>] [GITIGNORE] [HIDDEN] [SKIP_UNLISTABLE])
#
# file(GLOB)'s options apply, as there, to the globs after them; the
# others to the whole call. docs/cmake.md has the meaning of each.
function(trawl_glob var)
  # A call that asks nothing file() lacks (no CONFIGURE_DEPENDS, none of
  # trawl's own keywords) is file(): the same list by definition, at file()'s
  # cost, with no process and no trawl needed. Written for cost, since real
  # projects call it once per directory (flecs: 1,168 calls a configure)
  # and every command here costs about what file() of a small directory
  # does: no if() but one, and one regular expression, anchored (CMake
  # compiles one at every MATCHES). docs/cmake.md, "What a call costs".
  # (Each argument one list element, none empty: the count of ARGV is ARGC,
  # and so is the count without empty ones and keywords.)
  set(args ${ARGV})
  list(REMOVE_ITEM args CONFIGURE_DEPENDS GITIGNORE HIDDEN SKIP_UNLISTABLE ROOT EXCLUDE PATTERNS)
  list(LENGTH args n)
  list(LENGTH ARGV n_argv)
  if(n EQUAL ARGC AND n_argv EQUAL ARGC AND
     ARGV MATCHES "^(([^;]*);(GLOB|GLOB_RECURSE);|(GLOB|GLOB_RECURSE);([^;]*);)")
    list(SUBLIST ARGV 2 -1 args)
    file(${CMAKE_MATCH_3}${CMAKE_MATCH_4} paths ${args})
    set(${CMAKE_MATCH_2}${CMAKE_MATCH_5} "${paths}" PARENT_SCOPE)
    return()
  endif()

  # The rest is trawl's. A call with CONFIGURE_DEPENDS that the previous
  # configure made the same way, when nothing any of its queries read has
  # changed since, has the list it had then (memo.cmake, _trawl_begin()):
  # planning a call costs a thousand commands. The call is known by its
  # directory and its arguments, each one list element (n_argv, above).
  get_property(begun GLOBAL PROPERTY _TRAWL_BEGUN)
  if(NOT begun)
    _trawl_begin()
  endif()
  set(sig "")
  if(n_argv EQUAL ARGC)
    set(sig "${CMAKE_CURRENT_SOURCE_DIR}|${TRAWL_GLOB_SKIP_UNLISTABLE}|${ARGC}|${ARGV}")
    get_property(memo GLOBAL PROPERTY "_TRAWL_M_${sig}")
    if(memo)
      get_property(result GLOBAL PROPERTY "_TRAWL_MR_${sig}")
      list(GET memo 0 at)
      list(GET memo 1 name)
      set_property(GLOBAL APPEND PROPERTY _TRAWL_MEMO_HITS ${at})
      set(${name} "${result}" PARENT_SCOPE)
      return()
    endif()
  endif()
  # The arguments go one by one (one may hold ';'), as _trawl_arg_<i> of
  # this scope, which _trawl_glob() reads; a body of its own, since the
  # length of this one costs every call above.
  math(EXPR last "${ARGC} - 1")
  foreach(k RANGE ${last})
    set(_trawl_arg_${k} "${ARGV${k}}")
  endforeach()
  _trawl_glob(name result "${var}" ${ARGC} "${sig}")
  set(${name} "${result}" PARENT_SCOPE)
endfunction()

# A new item of the call (_trawl_glob()) of KIND (GLOB or PATTERNS), with the
# settings file() applies to the globs after them as they are now.
macro(_trawl_new_item kind)
  math(EXPR n_items "${n_items} + 1")
  set(item_${n_items}_kind ${kind})
  set(item_${n_items}_list ${list_dirs})
  set(item_${n_items}_follow ${follow})
  set(item_${n_items}_relset ${relset})
  set(item_${n_items}_rel "${rel}")
endmacro()

# trawl_glob() asked by trawl: ARGC arguments in _trawl_arg_0 ... of the
# caller's scope, the first VAR; OUT_VAR = the variable to set, OUT = its
# list. SIG: the call's name in the memo, "" when it has none.
function(_trawl_glob out_var out var argc sig)
  set(mode "")
  if(argc GREATER 1)
    if(_trawl_arg_1 STREQUAL "GLOB" OR _trawl_arg_1 STREQUAL "GLOB_RECURSE")
      set(mode "${_trawl_arg_1}")
    elseif(var STREQUAL "GLOB" OR var STREQUAL "GLOB_RECURSE")
      # file()'s own order, trawl_glob(GLOB_RECURSE <var> ...): the one-word
      # migration from file(GLOB_RECURSE <var> ...).
      set(mode "${var}")
      set(var "${_trawl_arg_1}")
    endif()
  endif()
  set(keywords LIST_DIRECTORIES FOLLOW_SYMLINKS RELATIVE CONFIGURE_DEPENDS GITIGNORE HIDDEN
      SKIP_UNLISTABLE ROOT EXCLUDE PATTERNS)
  set(i 1)
  if(mode)
    set(i 2)
  endif()
  set(what "${var}")
  get_property(finished GLOBAL PROPERTY _TRAWL_FINISHED)
  if(finished AND NOT _TRAWL_VERIFYING)
    message(FATAL_ERROR "trawl_glob(${what}): called after the end of the top directory's "
      "CMakeLists.txt, where trawl_glob() writes its cache and re-check; call it before.")
  endif()
  set(list_dirs OFF)
  if("${mode}" STREQUAL "GLOB")
    set(list_dirs ON)
  endif()
  set(follow OFF)
  set(relset FALSE)
  set(rel "")
  set(cd FALSE)
  set(gitignore FALSE)
  set(hidden FALSE)
  set(skip FALSE)
  set(root "${CMAKE_CURRENT_SOURCE_DIR}")
  set(rootset FALSE)
  set(excludes "")
  set(wexcludes "")   # excludes of the queries of directories
  set(n_items 0)
  set(n_globs 0)
  while(i LESS argc)
    set(a "${_trawl_arg_${i}}")
    math(EXPR i "${i} + 1")
    if(NOT a IN_LIST keywords)
      # A glob expression (the common case first: one if() for it).
      if("${mode}" STREQUAL "")
        message(FATAL_ERROR "trawl_glob(${what}): '${a}' is a glob expression, which needs GLOB "
          "or GLOB_RECURSE right after the variable (PATTERNS need neither).")
      endif()
      math(EXPR n_globs "${n_globs} + 1")
      _trawl_new_item(GLOB)
      set(item_${n_items}_expr "${a}")
    elseif("${a}" STREQUAL "LIST_DIRECTORIES")
      if(NOT i LESS argc)
        message(FATAL_ERROR "trawl_glob(${what}): LIST_DIRECTORIES missing bool value.")
      endif()
      _trawl_bool(b "${_trawl_arg_${i}}")
      if("${b}" STREQUAL "")
        message(FATAL_ERROR "trawl_glob(${what}): LIST_DIRECTORIES missing bool value.")
      endif()
      set(list_dirs ${b})
      math(EXPR i "${i} + 1")
    elseif("${a}" STREQUAL "FOLLOW_SYMLINKS")
      set(follow ON)
    elseif("${a}" STREQUAL "RELATIVE")
      if(NOT i LESS argc)
        message(FATAL_ERROR "trawl_glob(${what}): GLOB requires a directory after the RELATIVE tag.")
      endif()
      set(relset TRUE)
      set(rel "${_trawl_arg_${i}}")
      math(EXPR i "${i} + 1")
    elseif("${a}" STREQUAL "CONFIGURE_DEPENDS")
      set(cd TRUE)
    elseif("${a}" STREQUAL "GITIGNORE")
      set(gitignore TRUE)
    elseif("${a}" STREQUAL "HIDDEN")
      set(hidden TRUE)
    elseif("${a}" STREQUAL "SKIP_UNLISTABLE")
      set(skip TRUE)
    elseif("${a}" STREQUAL "ROOT")
      if(NOT i LESS argc)
        message(FATAL_ERROR "trawl_glob(${what}): ROOT needs a directory.")
      endif()
      set(root "${_trawl_arg_${i}}")
      set(rootset TRUE)
      if(NOT IS_ABSOLUTE "${root}")
        set(root "${CMAKE_CURRENT_SOURCE_DIR}/${root}")
      endif()
      math(EXPR i "${i} + 1")
    elseif("${a}" STREQUAL "EXCLUDE" OR "${a}" STREQUAL "PATTERNS")
      set(n 0)
      if("${a}" STREQUAL "PATTERNS")
        _trawl_new_item(PATTERNS)
        set(item_${n_items}_pats "")
      endif()
      while(i LESS argc)
        set(p "${_trawl_arg_${i}}")
        if(p IN_LIST keywords)
          break()
        endif()
        if("${a}" STREQUAL "EXCLUDE")
          _trawl_json_append(excludes "${p}")
          _trawl_json_append(wexcludes "${p}")
          # A directory such a pattern covers is never read: not listed.
          if("${p}" MATCHES "^(.+)/\\*\\*$")
            _trawl_json_append(wexcludes "${CMAKE_MATCH_1}")
          endif()
        else()
          _trawl_json_append(item_${n_items}_pats "${p}")
          math(EXPR n "${n} + 1")
          set(item_${n_items}_pat_${n} "${p}")
        endif()
        math(EXPR i "${i} + 1")
      endwhile()
      if("${a}" STREQUAL "PATTERNS")
        if(n EQUAL 0)
          message(FATAL_ERROR "trawl_glob(${what}): PATTERNS needs at least one pattern.")
        endif()
        set(item_${n_items}_npats ${n})
      endif()
    endif()
  endwhile()
  if("${var}" STREQUAL "" OR ("${mode}" STREQUAL "" AND n_items EQUAL 0))
    message(FATAL_ERROR "trawl_glob(${what}): usage: trawl_glob(<var> GLOB|GLOB_RECURSE "
      "[options] <globs>...) or trawl_glob(<var> PATTERNS <patterns>...); docs/cmake.md.")
  endif()
  if(TRAWL_GLOB_SKIP_UNLISTABLE)
    set(skip TRUE)
  endif()

  set(ignore false)
  if(gitignore)
    set(ignore true)
  endif()
  _trawl_call_reset()
  foreach(it RANGE 1 ${n_items})
    if(n_items EQUAL 0)
      break()
    endif()
    set(ld ${item_${it}_list})
    set(fl ${item_${it}_follow})
    set(ftrue false)
    if(fl)
      set(ftrue true)
    endif()
    if("${item_${it}_kind}" STREQUAL "PATTERNS")
      _trawl_plan_patterns(${it})
    else()
      _trawl_plan_glob(${it})
    endif()
  endforeach()
  get_property(keys GLOBAL PROPERTY _TRAWL_CALL_ASK)
  # A call whose queries are new to this build directory (its first
  # configure, say) and that asks nothing beyond file() and
  # CONFIGURE_DEPENDS takes file()'s list now, and trawl answers it with all
  # the others at the end, in one process, where the two lists are compared
  # (_trawl_finish): one process a configure, not one a call.
  if(cd AND mode AND NOT (gitignore OR hidden OR skip OR rootset) AND "${excludes}" STREQUAL ""
     AND NOT _TRAWL_VERIFYING)
    _trawl_direct(done result ${mode} ${argc} "${sig}" ${keys})
    if(done)
      set(${out_var} "${var}" PARENT_SCOPE)
      set(${out} "${result}" PARENT_SCOPE)
      return()
    endif()
  endif()
  _trawl_answer(${cd} "${what}" ${keys})
  set_property(GLOBAL PROPERTY _TRAWL_CALL_ASK "")
  _trawl_plan_links()
  get_property(more GLOBAL PROPERTY _TRAWL_CALL_ASK)
  if(NOT "${more}" STREQUAL "")
    _trawl_answer(${cd} "${what}" ${more})
  endif()
  _trawl_result(result quiet)
  # Into the memo: with CONFIGURE_DEPENDS (its queries are in the cache,
  # whose answers the next configure compares), when it said nothing, and
  # when no link was looked at outside the queries (EXCLUDE with globs).
  if(cd AND quiet AND NOT "${sig}" STREQUAL "" AND
     ("${excludes}" STREQUAL "" OR NOT n_globs GREATER 0))
    _trawl_memo_add("${sig}" "${var}" "${result}" ${keys} ${more})
  endif()
  set(${out_var} "${var}" PARENT_SCOPE)
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

cmake_policy(POP)
