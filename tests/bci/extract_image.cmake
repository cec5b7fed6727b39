# SPDX-License-Identifier: Apache-2.0
# Test fixture: extracts a JDK's runtime image (lib/modules) into OUT once, with jimage.
# A missing JDK is not an error: the tests that need it print that they were skipped.
if(NOT EXISTS "${JDK}/bin/jimage")
  message(STATUS "no JDK at ${JDK}; nothing to extract")
  return()
endif()
if(EXISTS "${OUT}.stamp")
  return()
endif()
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${JDK}/bin/jimage" extract --dir "${OUT}" "${JDK}/lib/modules"
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "jimage extract failed: ${result}")
endif()
file(TOUCH "${OUT}.stamp")
