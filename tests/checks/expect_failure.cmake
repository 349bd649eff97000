# Runs COMMAND (a ;-list) and passes only if it fails and its output matches every regular
# expression in EXPECT (a ;-list): a check's test that it catches what it is for.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(output "${out}${err}")
if(status EQUAL 0)
  message(FATAL_ERROR "expected a failure, got success:\n${output}")
endif()
foreach(expected IN LISTS EXPECT)
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "the output lacks '${expected}':\n${output}")
  endif()
endforeach()
