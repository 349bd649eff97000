# Runs normlab-cli and checks how it ends. Called by ctest:
#   cmake -DCLI=<binary> -DARGS=<arguments, "|"-separated> -DEXPECT=<ok|error> -DREGEX=<regex> -P cli_check.cmake
# error: exit status 2 (a UserError) and exactly one line on stderr, matching REGEX.
# ok:    exit status 0 and stdout matching REGEX.
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${CLI}" ${arguments}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "ok")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "exit status ${status}, expected 0\nstderr: ${err}")
  endif()
  if(NOT out MATCHES "${REGEX}")
    message(FATAL_ERROR "stdout does not match '${REGEX}':\n${out}")
  endif()
else()
  if(NOT status EQUAL 2)
    message(FATAL_ERROR "exit status ${status}, expected 2 (a user error)\nstderr: ${err}")
  endif()
  if(NOT err MATCHES "^normlab-cli: [^\n]+\n$")
    message(FATAL_ERROR "stderr is not one 'normlab-cli: ...' line:\n${err}")
  endif()
  if(NOT err MATCHES "${REGEX}")
    message(FATAL_ERROR "stderr does not match '${REGEX}':\n${err}")
  endif()
endif()
message(STATUS "ok: ${err}${out}")
