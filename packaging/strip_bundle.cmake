# Run by `cmake --install` (and so by CPack) after the LibTorch libraries are copied into
# the private folder: strips those that still have a symbol table (libtorch_cpu.so and
# libc10.so come with one: 93 MB of the 451 MB) with --strip-unneeded, which keeps the
# dynamic symbols they are loaded and linked through. Libraries already stripped are left
# byte for byte as they came (stripping libgomp again would rewrite it, not shrink it).
# Set by install(CODE) before this runs: NORMLAB_BUNDLE_DIR, NORMLAB_BUNDLE_FILES,
# NORMLAB_READELF, NORMLAB_STRIP.
foreach(name IN LISTS NORMLAB_BUNDLE_FILES)
  set(path "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${NORMLAB_BUNDLE_DIR}/${name}")
  execute_process(COMMAND "${NORMLAB_READELF}" -S -W "${path}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE sections ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "readelf ${path}: ${error}")
  endif()
  if(sections MATCHES " \\.symtab ")
    message(STATUS "Stripping: ${path}")
    execute_process(COMMAND "${NORMLAB_STRIP}" --strip-unneeded "${path}"
                    RESULT_VARIABLE status ERROR_VARIABLE error)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "strip --strip-unneeded ${path}: ${error}")
    endif()
  endif()
endforeach()
