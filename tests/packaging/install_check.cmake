# Installs the build into a fresh prefix, as CPack does for the packages, and checks that
# the tree is complete and that both programs start from it with an empty home: LibTorch
# comes from the private folder through RUNPATH, not from the build or the user's cache;
# the copyright file covers every file installed (packaging/check-bundle.sh) and the
# LibTorch libraries are stripped.
#   cmake -DBUILD=<build dir> -DWORK=<scratch dir> -DAPP_ID=<id> -DLIBDIR=<lib/normlab>
#         -DCHECK_BUNDLE=<packaging/check-bundle.sh> -P install_check.cmake
set(prefix ${WORK}/prefix)
set(home ${WORK}/home)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${home})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "'${command}' failed (${status}):\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})

foreach(file bin/normlab bin/normlab-cli ${LIBDIR}/libtorch_cpu.so ${LIBDIR}/libc10.so ${LIBDIR}/libnormlab_idle_threads.so
        share/applications/${APP_ID}.desktop share/metainfo/${APP_ID}.metainfo.xml
        share/icons/hicolor/scalable/apps/${APP_ID}.svg
        share/man/man1/normlab.1.gz share/man/man1/normlab-cli.1.gz
        share/doc/normlab/copyright share/doc/normlab/changelog.gz)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the installed tree lacks ${file}")
  endif()
endforeach()
foreach(size 16 22 24 32 48 64 128 256 512)
  if(NOT EXISTS ${prefix}/share/icons/hicolor/${size}x${size}/apps/${APP_ID}.png)
    message(FATAL_ERROR "no ${size}x${size} icon")
  endif()
endforeach()
run(${CHECK_BUNDLE} ${prefix})
foreach(lib libtorch_cpu.so libc10.so)
  run(readelf -S -W ${prefix}/${LIBDIR}/${lib})
  if(out MATCHES " \\.symtab ")
    message(FATAL_ERROR "${LIBDIR}/${lib} was installed with its symbol table (packaging/strip_bundle.cmake)")
  endif()
endforeach()
if(EXISTS ${prefix}/${LIBDIR}/libtorch_cuda.so)
  message(FATAL_ERROR "the CUDA backend must not travel in the package (3.5 GB)")
endif()

foreach(program normlab normlab-cli)
  run(readelf -d ${prefix}/bin/${program})
  if(NOT out MATCHES "RUNPATH\\)[^\n]*\\[\\$ORIGIN/\\.\\./${LIBDIR}\\]")
    message(FATAL_ERROR "${program}'s RUNPATH is not $ORIGIN/../${LIBDIR}:\n${out}")
  endif()
  run(ldd ${prefix}/bin/${program})
  if(NOT out MATCHES "libtorch_cpu\\.so => ${prefix}/(bin/\\.\\./)?${LIBDIR}/libtorch_cpu\\.so")
    message(FATAL_ERROR "${program} does not load the LibTorch beside it:\n${out}")
  endif()
  if(NOT out MATCHES "libnormlab_idle_threads\\.so => ${prefix}/(bin/\\.\\./)?${LIBDIR}/libnormlab_idle_threads\\.so")
    message(FATAL_ERROR "${program} does not load the idle-threads library beside it:\n${out}")
  endif()
  # No display and an empty home: --version must still answer.
  run(${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY --unset=QT_QPA_PLATFORM
      --unset=XDG_CACHE_HOME HOME=${home} ${prefix}/bin/${program} --version)
  if(NOT out MATCHES "[0-9]+\\.[0-9]+\\.[0-9]+ \\(LibTorch [0-9.]+\\)")
    message(FATAL_ERROR "${program} --version: ${out}")
  endif()
endforeach()
run(gzip -dc ${prefix}/share/man/man1/normlab-cli.1.gz)
if(NOT out MATCHES "\\.SH NAME" OR NOT out MATCHES "learning rate")
  message(FATAL_ERROR "normlab-cli's man page lacks its options:\n${out}")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "installed tree complete; both programs start from it")
