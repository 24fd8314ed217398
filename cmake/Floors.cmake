# The floors of the source tree (docs/architecture.md): every folder of src/ is a library
# whose sources see only the folders they may include. A target is compiled against an
# include view of its own, a folder in the build tree holding links to exactly those
# folders of src/ (and to include/gpuperf), never against src/ as a whole: a forbidden
# #include names a file that is not there, and the build fails. tests/e2e/layering_test.sh
# reads the views back (views/<target>.owns: the folders the target is built from).
set(GP_VIEWS ${PROJECT_BINARY_DIR}/views)
file(REMOVE_RECURSE ${GP_VIEWS})
file(MAKE_DIRECTORY ${GP_VIEWS})

# gp_include_view(TARGET OWNS folder... SEES folder...): TARGET is built from the OWNS
# folders of src/ and may include them, the SEES folders and include/gpuperf. A folder is a
# path under src/ ("base", "analyze/join").
function(gp_include_view target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "OWNS;SEES")
  set(view ${GP_VIEWS}/${target})
  file(MAKE_DIRECTORY ${view})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/gpuperf ${view}/gpuperf SYMBOLIC)
  foreach(folder ${arg_OWNS} ${arg_SEES})
    get_filename_component(parent ${view}/${folder} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${view}/${folder} SYMBOLIC)
  endforeach()
  string(REPLACE ";" "\n" owns "${arg_OWNS}")
  file(WRITE ${GP_VIEWS}/${target}.owns "${owns}\n")
  target_include_directories(${target} PRIVATE ${view})
endfunction()

# gp_floor_sources(VAR folder...): the non-test sources of those folders and their
# subfolders.
function(gp_floor_sources var)
  set(sources)
  foreach(folder ${ARGN})
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${folder}/*.cc)
    list(FILTER found EXCLUDE REGEX "_test\\.cc$")
    list(APPEND sources ${found})
  endforeach()
  set(${var} ${sources} PARENT_SCOPE)
endfunction()

# gp_floor(TARGET folder OWNS... SEES... LINKS...): a static library of a floor's sources.
function(gp_floor target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "OWNS;SEES;LINKS")
  gp_floor_sources(sources ${arg_OWNS})
  add_library(${target} STATIC ${sources})
  gp_include_view(${target} OWNS ${arg_OWNS} SEES ${arg_SEES})
  target_link_libraries(${target} PUBLIC ${arg_LINKS})
endfunction()

# Tests, tools and benchmarks may include anything: the whole tree, not a view.
add_library(gp_test_includes INTERFACE)
target_include_directories(gp_test_includes INTERFACE ${PROJECT_SOURCE_DIR}/include
                                                      ${PROJECT_SOURCE_DIR}/src
                                                      ${PROJECT_SOURCE_DIR}/tests)
