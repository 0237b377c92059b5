# trawl_glob(): the lists of the previous configure's calls (cmake/Trawl.cmake).
#
# Planning a call costs about a thousand CMake commands; real projects glob
# in macros, once per directory. So a call with CONFIGURE_DEPENDS keeps its
# list in CMakeFiles/trawl/calls.cmake, under its directory and arguments,
# and the next configure takes it from there instead of planning the call
# again, when nothing any query of the previous configure read has changed:
# the answers the prefetch gives for them (_trawl_prefetch, one process,
# from the cache) are byte for byte the ones the lists were made from
# (calls.digest holds the SHA-1 of that answer script and of this module's
# files). When anything changed, no list is taken from there: every call is
# planned, as on a first configure.
#
# The files, written at the end of a configure that planned anything:
#   calls.digest     the SHA-1s the memo is valid for
#   calls.cmake      per call: _TRAWL_M_<call> (its number, the variable it
#                    sets) and _TRAWL_MR_<call> (the list)
#   calls-keys.cmake per call number: its queries (_TRAWL_MK_<n>) and its
#                    name (_TRAWL_MS_<n>); per query, what planning it had
#                    registered (its body, for queries.jsonl); read
#                    only when a configure mixes calls taken from the memo
#                    with calls planned again.

# The SHA-1 of this module's files: a memo made by other code is not taken.
function(_trawl_module_digest out)
  get_property(module_dir GLOBAL PROPERTY _TRAWL_MODULE_DIR)
  file(GLOB parts "${module_dir}/Trawl.cmake" "${module_dir}/trawl/*.cmake")
  set(all "")
  foreach(f IN LISTS parts)
    file(SHA1 "${f}" h)
    string(APPEND all "${h}")
  endforeach()
  string(SHA1 d "${all}")
  set(${out} "${d}" PARENT_SCOPE)
endfunction()

# Once per configure, at the first call trawl answers: the previous
# configure's queries with CONFIGURE_DEPENDS answered (_trawl_prefetch), and
# the memo taken in when those answers are the ones it was made from.
function(_trawl_begin)
  set_property(GLOBAL PROPERTY _TRAWL_BEGUN TRUE)
  set_property(GLOBAL PROPERTY _TRAWL_MEMO_LOADED 0)
  _trawl_state(state)
  _trawl_prefetch(recheck)
  get_property(prefetched GLOBAL PROPERTY _TRAWL_PREFETCHED_recheck)
  if(NOT prefetched OR NOT EXISTS "${state}/calls.digest" OR NOT EXISTS "${state}/calls.cmake")
    return()
  endif()
  file(SHA1 "${state}/prefetch-recheck.cmake" answers)
  _trawl_module_digest(module)
  file(READ "${state}/calls.digest" want)
  if(NOT "${answers} ${module}" STREQUAL "${want}")
    return()
  endif()
  include("${state}/calls.cmake")
  set_property(GLOBAL PROPERTY _TRAWL_MEMO_LOADED ${_TRAWL_MEMO_COUNT})
  _trawl_defer_finish()
endfunction()

# A call planned this configure, for the next one's memo: SIG its name,
# NAME the variable it sets, RESULT its list, KEYS its queries. Not kept
# when its list holds CR LF (no bracket argument carries it).
function(_trawl_memo_add sig name result)
  string(FIND "${result}" "\r\n" crlf)
  get_property(seen GLOBAL PROPERTY "_TRAWL_MSEEN_${sig}")
  if(NOT crlf EQUAL -1 OR seen)
    return()
  endif()
  set_property(GLOBAL PROPERTY "_TRAWL_MSEEN_${sig}" TRUE)
  _trawl_next(count _TRAWL_MEMO_NEW_N)
  set_property(GLOBAL PROPERTY _TRAWL_MN_${count}_SIG "${sig}")
  set_property(GLOBAL PROPERTY _TRAWL_MN_${count}_NAME "${name}")
  set_property(GLOBAL PROPERTY _TRAWL_MN_${count}_RESULT "${result}")
  set_property(GLOBAL PROPERTY _TRAWL_MN_${count}_KEYS ${ARGN})
endfunction()

# At the end of the configure: OUT = TRUE when every call trawl answered
# with CONFIGURE_DEPENDS was one the memo gave, each of its calls once, and
# nothing else asked anything of the re-check: the queries and the cache are
# the previous configure's. Otherwise the calls the memo
# gave register their queries (the configure goes on as one that planned
# them).
function(_trawl_memo_same out)
  set(${out} FALSE PARENT_SCOPE)
  get_property(loaded GLOBAL PROPERTY _TRAWL_MEMO_LOADED)
  get_property(hits GLOBAL PROPERTY _TRAWL_MEMO_HITS)
  if(NOT loaded OR NOT hits)
    return()
  endif()
  list(REMOVE_DUPLICATES hits)
  list(LENGTH hits n_hits)
  get_property(planned GLOBAL PROPERTY _TRAWL_USED_recheck)
  get_property(new GLOBAL PROPERTY _TRAWL_MEMO_NEW_N)
  get_property(direct GLOBAL PROPERTY _TRAWL_DIRECT_N)
  if(n_hits EQUAL loaded AND NOT planned AND NOT new AND NOT direct)
    set(${out} TRUE PARENT_SCOPE)
    return()
  endif()
  _trawl_state(state)
  include("${state}/calls-keys.cmake")
  foreach(at IN LISTS hits)
    get_property(keys GLOBAL PROPERTY _TRAWL_MK_${at})
    _trawl_register(recheck ${keys})
  endforeach()
endfunction()

# At the end of a configure that planned anything: the memo for the next
# one, of the calls the memo gave and those planned, valid for the answers
# in ANSWERS (the script of the batch that wrote the cache for the queries
# USED).
function(_trawl_memo_write answers)
  _trawl_state(state)
  set(calls "")
  set(n 0)
  get_property(hits GLOBAL PROPERTY _TRAWL_MEMO_HITS)
  if(hits)
    list(REMOVE_DUPLICATES hits)
  endif()
  # The entries: those the memo gave (as they were), then the new ones.
  foreach(at IN LISTS hits)
    get_property(sig GLOBAL PROPERTY _TRAWL_MS_${at})
    get_property(m GLOBAL PROPERTY "_TRAWL_M_${sig}")
    list(GET m 1 name)
    get_property(result GLOBAL PROPERTY "_TRAWL_MR_${sig}")
    get_property(keys GLOBAL PROPERTY _TRAWL_MK_${at})
    math(EXPR n "${n} + 1")
    _trawl_memo_entry(${n} "${sig}" "${name}" "${result}" ${keys})
  endforeach()
  get_property(n_new GLOBAL PROPERTY _TRAWL_MEMO_NEW_N)
  if(n_new)
    foreach(k RANGE 1 ${n_new})
      get_property(sig GLOBAL PROPERTY _TRAWL_MN_${k}_SIG)
      get_property(name GLOBAL PROPERTY _TRAWL_MN_${k}_NAME)
      get_property(result GLOBAL PROPERTY _TRAWL_MN_${k}_RESULT)
      get_property(keys GLOBAL PROPERTY _TRAWL_MN_${k}_KEYS)
      math(EXPR n "${n} + 1")
      _trawl_memo_entry(${n} "${sig}" "${name}" "${result}" ${keys})
    endforeach()
  endif()
  string(APPEND calls "set(_TRAWL_MEMO_COUNT ${n})\n")
  # What planning registered of each query the re-check uses.
  get_property(used GLOBAL PROPERTY _TRAWL_USED_recheck)
  foreach(key IN LISTS used)
    get_property(v GLOBAL PROPERTY _TRAWL_B_${key})
    _trawl_bracket(v "${v}")
    set_property(GLOBAL APPEND_STRING PROPERTY _TRAWL_MEMO_KEYS_TEXT
      "set_property(GLOBAL PROPERTY _TRAWL_B_${key} ${v})\n")
  endforeach()
  get_property(entries GLOBAL PROPERTY _TRAWL_MEMO_TEXT)
  get_property(entry_keys GLOBAL PROPERTY _TRAWL_MEMO_KEYS_TEXT)
  file(WRITE "${state}/calls.cmake" "${entries}${calls}")
  file(WRITE "${state}/calls-keys.cmake" "${entry_keys}")
  file(SHA1 "${answers}" a)
  _trawl_module_digest(module)
  file(WRITE "${state}/calls.digest" "${a} ${module}")
endfunction()

# The text of memo entry N (SIG, NAME, RESULT, KEYS), appended to the
# global _TRAWL_MEMO_TEXT (calls.cmake) and _TRAWL_MEMO_KEYS_TEXT
# (calls-keys.cmake): properties appended to in place, where a variable
# would be copied whole at every entry.
function(_trawl_memo_entry n sig name result)
  _trawl_bracket(m "_TRAWL_M_${sig}")
  _trawl_bracket(r "_TRAWL_MR_${sig}")
  _trawl_bracket(s "${sig}")
  _trawl_bracket(v "${name}")
  _trawl_bracket(l "${result}")
  set_property(GLOBAL APPEND_STRING PROPERTY _TRAWL_MEMO_TEXT
    "set_property(GLOBAL PROPERTY ${m} ${n} ${v})\nset_property(GLOBAL PROPERTY ${r} ${l})\n")
  set_property(GLOBAL APPEND_STRING PROPERTY _TRAWL_MEMO_KEYS_TEXT
    "set_property(GLOBAL PROPERTY _TRAWL_MS_${n} ${s})\nset_property(GLOBAL PROPERTY _TRAWL_MK_${n} ${ARGN})\n")
endfunction()
