# SPDX-License-Identifier: Apache-2.0
# add_java_classes(<target> <source dir> <output dir>): compiles every .java file below the source
# directory with JDK 17's javac (class files run on JDK 17 and newer) into the output directory.
function(add_java_classes target src_dir out_dir)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${src_dir}/*.java")
  if(NOT sources)
    return()
  endif()
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${target}.stamp")
  add_custom_command(
    OUTPUT "${stamp}"
    COMMAND ${CMAKE_COMMAND} -E rm -rf "${out_dir}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
    COMMAND "${JAVAC}" -g -nowarn -encoding UTF-8 --release 17 -d "${out_dir}" ${sources}
    COMMAND ${CMAKE_COMMAND} -E touch "${stamp}"
    DEPENDS ${sources}
    COMMENT "javac ${target}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${stamp}")
endfunction()
