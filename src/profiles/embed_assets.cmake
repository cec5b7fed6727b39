# SPDX-License-Identifier: Apache-2.0
# Writes a C++ header holding text files as raw string literals, so that jvmprof carries its web
# assets and needs no files at run time. Run with -DOUT=header -DNAMES=a;b -DFILES=pathA;pathB.
set(text "// Generated from web/ by src/profiles/embed_assets.cmake: do not edit.\n#pragma once\n#include <string_view>\nnamespace web_assets {\n")
list(LENGTH NAMES count)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  list(GET NAMES ${i} name)
  list(GET FILES ${i} file)
  file(READ "${file}" content)
  string(FIND "${content}" ")JVMPROF_ASSET\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter")
  endif()
  string(APPEND text "inline constexpr std::string_view ${name} = R\"JVMPROF_ASSET(${content})JVMPROF_ASSET\";\n")
endforeach()
string(APPEND text "}  // namespace web_assets\n")
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
