# Third-party libraries, all from Debian packages (scripts/install-deps.sh installs them).
# The CLI links the static archives so one binary runs on Debian 12 and Ubuntu 24.04.
find_package(Threads REQUIRED)

function(gp_require_file var name)
  find_file(${var} ${name} PATHS /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib NO_DEFAULT_PATH)
  if(NOT ${var})
    message(FATAL_ERROR "gpuperf: ${name} not found; run scripts/install-deps.sh")
  endif()
endfunction()

gp_require_file(GP_ZSTD_A libzstd.a)
add_library(gp_zstd_static INTERFACE)
target_link_libraries(gp_zstd_static INTERFACE ${GP_ZSTD_A})
# What the trace format links: the static archive, but libzstd.so in a binary that sets
# GPUPERF_ZSTD_SHARED (a shared library: the archive is not position-independent code).
add_library(gp_zstd INTERFACE)
target_link_libraries(gp_zstd INTERFACE
                      "$<IF:$<BOOL:$<TARGET_PROPERTY:GPUPERF_ZSTD_SHARED>>,zstd,${GP_ZSTD_A}>")

# libdw (symbolization) and what it needs, statically.
gp_require_file(GP_DW_A libdw.a)
gp_require_file(GP_ELF_A libelf.a)
gp_require_file(GP_Z_A libz.a)
gp_require_file(GP_LZMA_A liblzma.a)
gp_require_file(GP_BZ2_A libbz2.a)
add_library(gp_z_static INTERFACE)
target_link_libraries(gp_z_static INTERFACE ${GP_Z_A})
add_library(gp_dw_static INTERFACE)
target_link_libraries(gp_dw_static INTERFACE ${GP_DW_A} ${GP_ELF_A} ${GP_ZSTD_A} ${GP_Z_A}
                                             ${GP_LZMA_A} ${GP_BZ2_A} ${CMAKE_DL_LIBS})

# Header-only libraries.
add_library(gp_fmt INTERFACE)
target_compile_definitions(gp_fmt INTERFACE FMT_HEADER_ONLY=1)
add_library(gp_json INTERFACE)
add_library(gp_cli11 INTERFACE)
foreach(header fmt/format.h nlohmann/json.hpp CLI/CLI.hpp)
  if(NOT EXISTS /usr/include/${header})
    message(FATAL_ERROR "gpuperf: /usr/include/${header} missing; run scripts/install-deps.sh")
  endif()
endforeach()
