# The layers: every folder that holds code, with the folders its files may include, lowest
# first. The folders' libraries link what their row names (normlab_layer_library), a target
# sees the headers of the folders it links and no others, and the test
# checks.includes_follow_the_layers (tests/checks/check_includes.cmake) holds every #include
# of every file to its folder's row. Adding a folder or a dependency is a row here.
set(NORMLAB_LAYERS
  "core/system:"                 # the machine: files, folders, processes, signals, memory, threads
  "core/runs: core/system"       # what a run is as data: settings, records, names, seeds, colours
  "core/data: core/system"       # corpus, tokenizer, dataset
  "core/device: core/system"     # the CUDA backend, loaded at run time
  "core/model: core/runs"        # the GPT and its linear layers
  "core/training: core/model core/data core/device core/runs core/system"
  "core/sweeps: core/runs core/system"  # sweeps, their chart, Slurm job arrays
  "core/gpu_install: core/device core/system"  # fetching and checking the CUDA libraries
  "lab: core/training core/sweeps core/gpu_install core/device core/runs core/system"
  "ui: lab core/training core/sweeps core/gpu_install core/data core/device core/runs core/system"
  "app: ui core/training core/sweeps core/gpu_install core/data core/device core/runs core/system"
  "packaging:"
  "tests/support: core/training core/data core/gpu_install core/runs"
  "tests/core: tests/support core/training core/sweeps core/gpu_install core/model core/data core/device core/runs core/system"
  "tests/app: tests/core tests/support core/training core/sweeps core/data core/runs"
  "tests/fuzz: core/runs core/training core/model core/data"
  "tests/lab: tests/support lab core/training core/device core/runs core/system"
  "tests/ui: tests/lab tests/support ui lab core/training core/sweeps core/data core/device core/runs core/system")

# The folders `folder`'s row allows, into `out`.
function(normlab_layer_uses folder out)
  foreach(row IN LISTS NORMLAB_LAYERS)
    string(REGEX MATCH "^([^:]+):(.*)$" _ "${row}")
    if(CMAKE_MATCH_1 STREQUAL folder)
      string(STRIP "${CMAKE_MATCH_2}" uses)
      separate_arguments(uses UNIX_COMMAND "${uses}")
      set(${out} "${uses}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${folder} has no row in NORMLAB_LAYERS (cmake/NormLabLayers.cmake)")
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  return()  # the layers test needs only the table
endif()

# normlab_core_runs for core/runs.
function(normlab_layer_target folder out)
  string(REPLACE "/" "_" name "normlab_${folder}")
  set(${out} ${name} PARENT_SCOPE)
endfunction()

# Lets whoever links `target` include `folder`'s headers by their path from the source
# root ("core/runs/config.h"), and nothing else: the target's include folder in the build
# tree holds one link, to `folder`, so a target sees only the folders it links.
function(normlab_expose_folder target folder)
  set(root ${PROJECT_BINARY_DIR}/include/${target})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()

# The library of the folder being configured (normlab_core_runs in core/runs), linking the
# libraries of the folders its row names. The rest of the arguments are add_library's.
function(normlab_layer_library)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  normlab_layer_target(${folder} name)
  add_library(${name} ${ARGN})
  normlab_expose_folder(${name} ${folder})
  normlab_layer_uses(${folder} uses)
  set(scope PUBLIC)
  if("INTERFACE" IN_LIST ARGN)
    set(scope INTERFACE)
  endif()
  foreach(use IN LISTS uses)
    normlab_layer_target(${use} dependency)
    target_link_libraries(${name} ${scope} ${dependency})
  endforeach()
  target_link_libraries(${name} ${scope} normlab_flags)
endfunction()
