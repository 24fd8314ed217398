# Where `cmake --install` puts gpuperf, as a distribution lays it out, and the Debian package
# built from that layout (`cpack -G DEB` in the build tree; docs/install.md):
#   bin/gpuperf                          the CLI
#   lib/gpuperf/libgpuperf_inject.so     the guest library, with libgpuperf_preload.so and the
#                                        libunwind.so.8 it finds through its $ORIGIN RUNPATH
#   share/doc/gpuperf/                   README.md and docs/
# The CLI finds the guest library from its own path (bin/../lib/gpuperf), so the tree can be
# moved as a whole (a prefix of /opt/gpuperf, or a package unpacked anywhere).
set(GPUPERF_INSTALL_LIBDIR lib/gpuperf)
install(TARGETS gpuperf RUNTIME DESTINATION bin COMPONENT gpuperf)
install(FILES README.md DESTINATION share/doc/gpuperf COMPONENT gpuperf)
install(DIRECTORY docs/ DESTINATION share/doc/gpuperf COMPONENT gpuperf)
if(GPUPERF_HAVE_INJECT)
  install(TARGETS gpuperf_inject gpuperf_preload LIBRARY DESTINATION ${GPUPERF_INSTALL_LIBDIR}
          COMPONENT gpuperf)
  if(GP_LIBUNWIND_SO)
    # The package's own copy, as in the build tree: GPU images often lack libunwind.
    get_filename_component(gp_libunwind_real ${GP_LIBUNWIND_SO} REALPATH)
    install(FILES ${gp_libunwind_real} DESTINATION ${GPUPERF_INSTALL_LIBDIR} RENAME libunwind.so.8
            COMPONENT gpuperf)
  endif()
endif()

set(CPACK_PACKAGE_NAME gpuperf)
set(CPACK_PACKAGE_VENDOR "gpuperf")
set(CPACK_PACKAGE_CONTACT "gpuperf developers <gpuperf@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU profiler for CUDA programs: which CPU code is responsible for how much GPU time")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)  # xz takes longer than the rest of the build of it
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# What the binaries link dynamically (the CLI's libraries are static): libzstd for the guest
# library, liblzma and libgcc_s for the libunwind it carries. libcupti comes with CUDA (or with
# PyTorch), not from Debian, and is found at run time.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.36), libzstd1, liblzma5, libgcc-s1")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "gpuperf records every kernel, copy, API call and the exact CPU call stack that launched
 each GPU operation of any CUDA program, without recompiling and without root, and turns
 them into reports, flame graphs weighted by GPU time and timelines.")
include(CPack)
