# trawl_glob(): text helpers: JSON strings for trawl batch, CMake's own
# boolean words, names shown in messages (cmake/Trawl.cmake).

# OUT = S as a JSON string, quotes included. Bytes >= 0x80 are passed as they
# are: trawl refuses text that is not UTF-8, naming the line.
function(_trawl_json out s)
  string(REPLACE "\\" "\\\\" s "${s}")
  string(REPLACE "\"" "\\\"" s "${s}")
  string(ASCII 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
         31 ctl)
  if("${s}" MATCHES "[${ctl}]")
    foreach(c RANGE 1 31)
      string(ASCII ${c} ch)
      if(c LESS 16)
        math(EXPR hex "${c}" OUTPUT_FORMAT HEXADECIMAL)
        string(REPLACE "0x" "\\u000" esc "${hex}")
      else()
        math(EXPR hex "${c}" OUTPUT_FORMAT HEXADECIMAL)
        string(REPLACE "0x" "\\u00" esc "${hex}")
      endif()
      string(REPLACE "${ch}" "${esc}" s "${s}")
    endforeach()
  endif()
  set(${out} "\"${s}\"" PARENT_SCOPE)
endfunction()

# Append pattern P to the JSON array text in variable VAR.
function(_trawl_json_append var p)
  _trawl_json(j "${p}")
  if("${${var}}" STREQUAL "")
    set(${var} "${j}" PARENT_SCOPE)
  else()
    set(${var} "${${var}}, ${j}" PARENT_SCOPE)
  endif()
endfunction()

# OUT = S as a trawl-dialect pattern that matches exactly S (one component
# or a path of them): each of *?[]{}\,!^ escaped, libcore's rule
# (trawl_pattern_escape() in trawl/pattern.h; tests/corpus/escaper.txt holds
# both to it, tests/cmake/escape.py this one).
function(_trawl_literal out s)
  string(REGEX REPLACE "([][\\\\{},*?!^])" "\\\\\\1" s "${s}")
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

# Is S "on" or "off" as CMake's file() reads LIST_DIRECTORIES (cmIsOn,
# cmIsOff)? OUT = ON, OFF or "" (neither).
function(_trawl_bool out s)
  string(TOUPPER "${s}" u)
  if("${u}" MATCHES "^(1|ON|YES|TRUE|Y)$")
    set(${out} ON PARENT_SCOPE)
  elseif("${u}" MATCHES "^(0|OFF|NO|FALSE|N|IGNORE|NOTFOUND)$" OR "${u}" STREQUAL "" OR
         "${u}" MATCHES "-NOTFOUND$")
    set(${out} OFF PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# S with control bytes shown as \n, \r, \t or \xHH: for messages that name
# a file, so that a name cannot forge lines of CMake's output.
function(_trawl_shown out s)
  string(REPLACE "\n" "\\n" s "${s}")
  string(REPLACE "\r" "\\r" s "${s}")
  string(REPLACE "\t" "\\t" s "${s}")
  string(ASCII 1 2 3 4 5 6 7 8 11 12 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 127
         ctl)
  if("${s}" MATCHES "[${ctl}]")
    foreach(c RANGE 1 127)
      if(c LESS 32 OR c EQUAL 127)
        string(ASCII ${c} ch)
        string(HEX "${ch}" h)
        string(REPLACE "${ch}" "\\x${h}" s "${s}")
      endif()
    endforeach()
  endif()
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

# OUT = S as a CMake bracket argument, which nothing evaluates: with as many
# '=' as S needs (none of its "]=...=]" may close it, nor a "]=...=" at its
# end), and a newline before an S that starts with one (CMake drops the
# first). S must not hold CR LF, which CMake reads as LF in one.
function(_trawl_bracket out s)
  set(eq "=")
  while("${s}" MATCHES "]${eq}(]|$)")
    string(APPEND eq "=")
  endwhile()
  string(SUBSTRING "${s}" 0 1 first)
  if(first STREQUAL "\n")
    set(s "\n${s}")
  endif()
  set(${out} "[${eq}[${s}]${eq}]" PARENT_SCOPE)
endfunction()
