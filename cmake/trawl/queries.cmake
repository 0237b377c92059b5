# trawl_glob(): queries and their answers. A query is the body of one
# `trawl batch` line (its members but the id); its key is the body's SHA-1.
# Answers are kept in global properties: _TRAWL_R_<key> the paths a list can
# carry, _TRAWL_N_<key> how many it cannot, _TRAWL_U_<key>_<j> those
# (cmake/Trawl.cmake).

function(_trawl_state out)
  set(${out} "${CMAKE_BINARY_DIR}/CMakeFiles/trawl" PARENT_SCOPE)
endfunction()

# Read the script FILE that `trawl batch --format cmake` wrote for the
# queries KEYS (in order) into the answers.
function(_trawl_read_answers file)
  include("${file}")
  set(k 0)
  foreach(key IN LISTS ARGN)
    math(EXPR k "${k} + 1")
    set_property(GLOBAL PROPERTY _TRAWL_R_${key} "${TRAWL_BATCH_${k}}")
    set_property(GLOBAL PROPERTY _TRAWL_N_${key} "${TRAWL_BATCH_${k}_UNLISTABLE}")
    if(TRAWL_BATCH_${k}_UNLISTABLE GREATER 0)
      foreach(j RANGE 1 ${TRAWL_BATCH_${k}_UNLISTABLE})
        set_property(GLOBAL PROPERTY _TRAWL_U_${key}_${j} "${TRAWL_BATCH_${k}_UNLISTABLE_${j}}")
      endforeach()
    endif()
  endforeach()
endfunction()

# Write the queries KEYS to FILE as `trawl batch` lines, their ids 1, 2, ...
function(_trawl_write_queries file)
  # (Appended to a global property in place: string(APPEND) copies the
  # whole text every time, quadratic over thousands of queries.)
  set_property(GLOBAL PROPERTY _TRAWL_LINES "")
  set(k 0)
  foreach(key IN LISTS ARGN)
    math(EXPR k "${k} + 1")
    get_property(body GLOBAL PROPERTY _TRAWL_B_${key})
    set_property(GLOBAL APPEND_STRING PROPERTY _TRAWL_LINES "{\"id\": ${k}, ${body}}\n")
  endforeach()
  get_property(lines GLOBAL PROPERTY _TRAWL_LINES)
  file(WRITE "${file}" "${lines}")
endfunction()

# Run `trawl batch --format cmake` on the queries KEYS; OUT_OK = whether it
# answered, OUT_ERR = its messages. With CACHE, the batch keeps its cache
# there. The answers are read in.
function(_trawl_batch out_ok out_err name cache)
  _trawl_executable(exe)
  _trawl_state(state)
  file(MAKE_DIRECTORY "${state}")
  _trawl_write_queries("${state}/${name}.jsonl" ${ARGN})
  set(args batch --format cmake)
  if(cache)
    list(APPEND args --cache "${cache}")
  endif()
  execute_process(COMMAND "${exe}" ${args} "${state}/${name}.jsonl"
    OUTPUT_FILE "${state}/${name}.cmake" ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_err} "${err}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    set(${out_ok} FALSE PARENT_SCOPE)
    return()
  endif()
  _trawl_read_answers("${state}/${name}.cmake" ${ARGN})
  set(${out_ok} TRUE PARENT_SCOPE)
endfunction()

# Register the query of ROOT (a path), INCLUDES and EXCLUDES (the items of
# JSON arrays, written by _trawl_json_append), HIDDEN IGNORE FOLLOW
# (true/false), TYPES (the JSON items of "type"); OUT = its key.
function(_trawl_body out root includes excludes hidden ignore follow types)
  _trawl_json(r "${root}")
  set(body "\"root\": ${r}, \"include\": [${includes}], \"exclude\": [${excludes}], \"hidden\": ${hidden}, \"ignore\": ${ignore}, \"follow\": ${follow}, \"type\": [${types}]")
  string(SHA1 key "${body}")
  set_property(GLOBAL PROPERTY _TRAWL_B_${key} "${body}")
  set(${out} ${key} PARENT_SCOPE)
endfunction()

# The answers of the previous configure's queries of one KIND, in one
# process, once per configure at the first call of that kind: "recheck", the
# calls with CONFIGURE_DEPENDS (queries.jsonl; with the cache, so that an
# unchanged tree is answered from its records with no walk), or "configure",
# the others that trawl answers (configure-queries.jsonl; a walk, no cache:
# nothing re-checks them). Calls of that kind whose queries were asked
# then find their answers; those with new ones each run their own batch.
function(_trawl_prefetch kind)
  get_property(done GLOBAL PROPERTY _TRAWL_PREFETCH_DONE_${kind})
  if(done)
    return()
  endif()
  set_property(GLOBAL PROPERTY _TRAWL_PREFETCH_DONE_${kind} TRUE)
  set_property(GLOBAL PROPERTY _TRAWL_PREFETCHED_${kind} "")
  _trawl_state(state)
  set(args batch --format cmake)
  if(kind STREQUAL "recheck")
    set(name queries)
    list(APPEND args --cache "${state}/cache")
  else()
    set(name configure-queries)
  endif()
  if(NOT EXISTS "${state}/${name}.cmake" OR NOT EXISTS "${state}/${name}.jsonl")
    return()
  endif()
  include("${state}/${name}.cmake")
  if(NOT _TRAWL_PREV_KEYS)
    return()
  endif()
  _trawl_executable(exe)
  execute_process(COMMAND "${exe}" ${args} "${state}/${name}.jsonl"
    OUTPUT_FILE "${state}/prefetch-${kind}.cmake" ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    # A root that is gone, say: each call asks for itself.
    return()
  endif()
  _trawl_read_answers("${state}/prefetch-${kind}.cmake" ${_TRAWL_PREV_KEYS})
  foreach(key IN LISTS _TRAWL_PREV_KEYS)
    set_property(GLOBAL PROPERTY _TRAWL_HAVE_${key} TRUE)
  endforeach()
  set_property(GLOBAL PROPERTY _TRAWL_PREFETCHED_${kind} "${_TRAWL_PREV_KEYS}")
  if(NOT "${err}" STREQUAL "")
    set_property(GLOBAL APPEND_STRING PROPERTY _TRAWL_PREFETCH_PROBLEMS "${err}")
  endif()
endfunction()

# Make sure the queries KEYS are answered: those not answered yet in this
# configure in one `trawl batch`. CD: the call has CONFIGURE_DEPENDS (its
# queries are kept for the cache and the re-check). WHAT names the call in
# messages.
function(_trawl_answer cd what)
  set(kind configure)
  if(cd)
    set(kind recheck)
  endif()
  _trawl_prefetch(${kind})
  set(missing "")
  foreach(key IN LISTS ARGN)
    get_property(have GLOBAL PROPERTY _TRAWL_HAVE_${key})
    if(NOT have AND NOT key IN_LIST missing)
      list(APPEND missing ${key})
    endif()
  endforeach()
  if(missing)
    _trawl_batch(ok err call "" ${missing})
    if(NOT ok)
      message(FATAL_ERROR "trawl_glob(${what}): trawl batch failed:\n${err}")
    endif()
    if(NOT "${err}" STREQUAL "")
      message(WARNING "trawl_glob(${what}): ${err}")
    endif()
    foreach(key IN LISTS missing)
      set_property(GLOBAL PROPERTY _TRAWL_HAVE_${key} TRUE)
    endforeach()
  endif()
  _trawl_register(${kind} ${ARGN})
endfunction()

# The queries KEYS are used by this configure, of KIND (recheck or
# configure): kept for the next one, and for the cache with recheck.
function(_trawl_register kind)
  # (A flag per query rather than IN_LIST, which would cost each call the
  # length of the list: a configure of many calls would be quadratic.)
  foreach(key IN LISTS ARGN)
    get_property(seen GLOBAL PROPERTY _TRAWL_USED_${kind}_${key})
    if(NOT seen)
      set_property(GLOBAL PROPERTY _TRAWL_USED_${kind}_${key} TRUE)
      set_property(GLOBAL APPEND PROPERTY _TRAWL_USED_${kind} ${key})
    endif()
  endforeach()
  _trawl_defer_finish()
endfunction()

# OUT = the global counter PROPERTY plus one, which it becomes (1 the first
# time).
function(_trawl_next out property)
  get_property(count GLOBAL PROPERTY ${property})
  if(NOT count)   # (a variable named n would be CMake's false constant N)
    set(count 0)
  endif()
  math(EXPR count "${count} + 1")
  set_property(GLOBAL PROPERTY ${property} ${count})
  set(${out} ${count} PARENT_SCOPE)
endfunction()

# _trawl_finish() at the end of the top directory, once.
function(_trawl_defer_finish)
  get_property(deferred GLOBAL PROPERTY _TRAWL_FINISH_DEFERRED)
  if(NOT deferred)
    set_property(GLOBAL PROPERTY _TRAWL_FINISH_DEFERRED TRUE)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _trawl_finish)
  endif()
endfunction()

# A call with CONFIGURE_DEPENDS and nothing else file() lacks (trawl_glob()):
# when one of its queries KEYS is not answered yet, OUT = file(MODE)'s list
# for the ARGC arguments _trawl_arg_<i> of the caller's caller (those but
# CONFIGURE_DEPENDS, which file() would act on), OUT_DONE = TRUE, and the
# call is kept to be asked again at the end (_trawl_verify), SIG its name in
# the memo. OUT_DONE =
# FALSE when every query is answered already, or an argument is one no list
# carries to file() as it is (empty, with a ';', or brackets that join it to
# the next).
function(_trawl_direct out_done out mode argc sig)
  set(${out_done} FALSE PARENT_SCOPE)
  _trawl_prefetch(recheck)
  set(new FALSE)
  foreach(key IN LISTS ARGN)
    get_property(have GLOBAL PROPERTY _TRAWL_HAVE_${key})
    if(NOT have)
      set(new TRUE)
      break()
    endif()
  endforeach()
  if(NOT new)
    return()
  endif()
  set(args "")
  set(all "")
  set(n_args 0)
  math(EXPR last "${argc} - 1")
  foreach(k RANGE ${last})
    set(a "${_trawl_arg_${k}}")
    if("${a}" STREQUAL "" OR "${a}" MATCHES ";")
      return()
    endif()
    list(APPEND all "${a}")
    if(k GREATER 1 AND NOT a STREQUAL "CONFIGURE_DEPENDS")
      list(APPEND args "${a}")
      math(EXPR n_args "${n_args} + 1")
    endif()
  endforeach()
  # A '[' or ']' can join elements of a list: each must still be one.
  list(LENGTH all n_all)
  list(LENGTH args n)
  if(NOT n_all EQUAL argc OR NOT n EQUAL n_args)
    return()
  endif()
  file(${mode} paths ${args})
  _trawl_register(recheck ${ARGN})
  set_property(GLOBAL APPEND PROPERTY _TRAWL_PENDING ${ARGN})
  _trawl_next(count _TRAWL_DIRECT_N)
  set_property(GLOBAL PROPERTY _TRAWL_DIRECT_${count}_ARGS "${all}")
  set_property(GLOBAL PROPERTY _TRAWL_DIRECT_${count}_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set_property(GLOBAL PROPERTY _TRAWL_DIRECT_${count}_RESULT "${paths}")
  set_property(GLOBAL PROPERTY _TRAWL_DIRECT_${count}_SIG "${sig}")
  set(${out} "${paths}" PARENT_SCOPE)
  set(${out_done} TRUE PARENT_SCOPE)
endfunction()

# The calls _trawl_direct() answered with file(), asked again now that trawl
# has answered their queries (one batch for all of them): OUT = whether
# every list is the same. A name a list cannot carry stops the configure
# here, naming it, as it would have at the call.
function(_trawl_verify out)
  set(${out} TRUE PARENT_SCOPE)
  get_property(pending GLOBAL PROPERTY _TRAWL_PENDING)
  if(NOT pending)
    return()
  endif()
  list(REMOVE_DUPLICATES pending)
  _trawl_batch(ok err direct "" ${pending})
  if(NOT ok)
    message(FATAL_ERROR "trawl_glob: trawl batch failed:\n${err}")
  endif()
  if(NOT "${err}" STREQUAL "")
    set_property(GLOBAL APPEND_STRING PROPERTY _TRAWL_PREFETCH_PROBLEMS "${err}")
  endif()
  foreach(key IN LISTS pending)
    set_property(GLOBAL PROPERTY _TRAWL_HAVE_${key} TRUE)
  endforeach()
  set(_TRAWL_VERIFYING TRUE)
  set(TRAWL_GLOB_SKIP_UNLISTABLE FALSE)
  set(same TRUE)
  get_property(n GLOBAL PROPERTY _TRAWL_DIRECT_N)
  foreach(c RANGE 1 ${n})
    get_property(all GLOBAL PROPERTY _TRAWL_DIRECT_${c}_ARGS)
    get_property(CMAKE_CURRENT_SOURCE_DIR GLOBAL PROPERTY _TRAWL_DIRECT_${c}_DIR)
    get_property(was GLOBAL PROPERTY _TRAWL_DIRECT_${c}_RESULT)
    get_property(sig GLOBAL PROPERTY _TRAWL_DIRECT_${c}_SIG)
    set(k 0)
    foreach(a IN LISTS all)
      set(_trawl_arg_${k} "${a}")
      math(EXPR k "${k} + 1")
    endforeach()
    _trawl_glob(name result "${_trawl_arg_0}" ${k} "${sig}")
    if(NOT "${result}" STREQUAL "${was}")
      set(same FALSE)
    endif()
  endforeach()
  set(${out} ${same} PARENT_SCOPE)
endfunction()
