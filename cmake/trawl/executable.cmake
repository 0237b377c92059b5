# trawl_glob(): the trawl executable: TRAWL_EXECUTABLE, the package's
# Trawl::trawl, one on the PATH that speaks `batch --format cmake`, or one
# compiled here (cmake/Trawl.cmake).

function(_trawl_probe out exe)
  execute_process(COMMAND "${exe}" batch --format cmake -
    INPUT_FILE /dev/null OUTPUT_VARIABLE o ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND "${o}" STREQUAL "set(TRAWL_BATCH_COUNT 0)\n")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Where a trawl compiled here is kept: once per machine and user, keyed by
# what went into it, so that every build directory of every project shares
# it. TRAWL_CACHE_DIR, else $XDG_CACHE_HOME/trawl, else ~/.cache/trawl; the
# build directory when none of these can be had.
function(_trawl_cache_dir out)
  if(TRAWL_CACHE_DIR)
    set(dir "${TRAWL_CACHE_DIR}")
  elseif(NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(dir "$ENV{XDG_CACHE_HOME}/trawl")
  elseif(NOT "$ENV{HOME}" STREQUAL "")
    set(dir "$ENV{HOME}/.cache/trawl")
  else()
    set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/trawl")
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# Compile trawl with the project's C compiler: the README's one command, once
# per machine. The binary is kept under the cache directory in a folder
# named by the SHA-1 of the command and of every source and header it reads,
# so that the same checkout (or another of the same sources) with the same
# compiler finds it there, and a change to either compiles it again. The
# compiler writes a file of its own beside it, renamed into place when done:
# a configure racing this one either finds no binary and compiles too, or
# finds the whole of one (rename(2) is atomic; both are the same program).
function(_trawl_build out)
  get_property(module_dir GLOBAL PROPERTY _TRAWL_MODULE_DIR)
  set(top "${module_dir}/..")
  get_filename_component(top "${top}" ABSOLUTE)
  set(how "install trawl (meson install from a checkout; docs/cmake.md) and let "
          "find_package(Trawl CONFIG) or the PATH find it, or set TRAWL_EXECUTABLE")
  if(NOT EXISTS "${top}/sources.txt" OR NOT EXISTS "${top}/libcore/include/trawl/trawl.h")
    message(FATAL_ERROR "trawl_glob: no trawl executable found, and ${module_dir} is not "
      "in a trawl source checkout to build one from: " ${how} ".")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST languages OR NOT CMAKE_C_COMPILER)
    message(FATAL_ERROR "trawl_glob: no trawl executable found, and this project does not enable "
      "C, whose compiler would build it (trawl is C). Either " ${how} ", or enable C "
      "(project(... C CXX) or enable_language(C)).")
  endif()
  if(CMAKE_CROSSCOMPILING)
    message(FATAL_ERROR "trawl_glob: no trawl executable found; cross-compiling, the project's C "
      "compiler makes programs this machine cannot run: " ${how} " to a trawl for this machine.")
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(_TRAWL_GLIB QUIET glib-2.0>=2.68)
  endif()
  if(NOT _TRAWL_GLIB_FOUND)
    message(FATAL_ERROR "trawl_glob: building trawl needs GLib 2.68 or newer through pkg-config "
      "(Debian: apt-get install pkg-config libglib2.0-dev libxxhash-dev), or " ${how} ".")
  endif()
  # The one list of the sources (sources.txt: one glob a line, FOLDER/GLOB),
  # and the headers beside them.
  file(STRINGS "${top}/sources.txt" globs REGEX "^[^#]")
  set(sources "")
  file(GLOB headers "${top}/libcore/include/trawl/*.h")
  foreach(g IN LISTS globs)
    file(GLOB s "${top}/${g}")
    get_filename_component(d "${g}" DIRECTORY)
    file(GLOB h "${top}/${d}/*.h")
    list(APPEND sources ${s})
    list(APPEND headers ${h})
  endforeach()
  set(command "${CMAKE_C_COMPILER}" -std=c11 -O2 ${sources} "-I${top}/libcore/include"
              ${_TRAWL_GLIB_CFLAGS} ${_TRAWL_GLIB_LDFLAGS})
  # The key: the command (the compiler, its version, GLib's flags) and what
  # every file it reads holds, by name relative to the checkout.
  set(recipe "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}\n${command}\n")
  foreach(f IN LISTS sources headers)
    file(SHA1 "${f}" h)
    file(RELATIVE_PATH r "${top}" "${f}")
    string(APPEND recipe "${h} ${r}\n")
  endforeach()
  string(REPLACE "${top}" "<top>" recipe "${recipe}")
  string(SHA1 key "${recipe}")
  _trawl_cache_dir(cache)
  set(dir "${cache}/cmake/${key}")
  set(exe "${dir}/trawl")
  if(NOT EXISTS "${exe}")
    file(MAKE_DIRECTORY "${dir}")
    string(RANDOM LENGTH 12 tag)
    set(tmp "${exe}.${tag}.tmp")
    message(STATUS "trawl_glob: building trawl with ${CMAKE_C_COMPILER} into ${dir}")
    execute_process(COMMAND ${command} -o "${tmp}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(NOT rc EQUAL 0)
      file(REMOVE "${tmp}")
      message(FATAL_ERROR "trawl_glob: building trawl with ${CMAKE_C_COMPILER} failed (${rc}):\n"
        "${log}\nIt needs a C11 compiler, GLib 2.68 or newer and xxhash.h (Debian: apt-get "
        "install gcc pkg-config libglib2.0-dev libxxhash-dev); or " ${how} ".")
    endif()
    file(WRITE "${dir}/recipe" "${recipe}")
    file(RENAME "${tmp}" "${exe}")
  endif()
  set(${out} "${exe}" PARENT_SCOPE)
endfunction()

function(_trawl_executable out)
  get_property(exe GLOBAL PROPERTY _TRAWL_EXE)
  if(exe)
    set(${out} "${exe}" PARENT_SCOPE)
    return()
  endif()
  if(TRAWL_EXECUTABLE)
    set(exe "${TRAWL_EXECUTABLE}")
    _trawl_probe(ok "${exe}")
    if(NOT ok)
      message(FATAL_ERROR "trawl_glob: TRAWL_EXECUTABLE (${exe}) does not run `trawl batch "
        "--format cmake`: it is missing or older than this module.")
    endif()
  elseif(TARGET Trawl::trawl)
    get_target_property(exe Trawl::trawl IMPORTED_LOCATION)
  else()
    find_program(_TRAWL_ON_PATH trawl)
    set(ok FALSE)
    if(_TRAWL_ON_PATH)
      _trawl_probe(ok "${_TRAWL_ON_PATH}")
    endif()
    if(ok)
      set(exe "${_TRAWL_ON_PATH}")
    else()
      _trawl_build(exe)
    endif()
  endif()
  set_property(GLOBAL PROPERTY _TRAWL_EXE "${exe}")
  set(${out} "${exe}" PARENT_SCOPE)
endfunction()
