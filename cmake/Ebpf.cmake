# What the eBPF CPU profiler (src/ebpf) needs at build time: clang to compile BPF programs,
# bpftool to turn them into a skeleton header, libbpf's headers and static archive (the
# CLI links it in: the GPU machines have no libbpf), and the uapi headers. Sets
# GPUPERF_HAVE_EBPF when all are there; otherwise says what is missing and the build goes
# on without the profiler (`record --cpu` then says so).
set(GPUPERF_HAVE_EBPF OFF)
find_program(GP_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
find_program(GP_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
find_file(GP_BPF_A libbpf.a PATHS /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib NO_DEFAULT_PATH)
find_path(GP_BPF_INCLUDE bpf/libbpf.h)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(GP_BPF_ARCH x86)
  set(GP_BPF_MULTIARCH /usr/include/x86_64-linux-gnu)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(GP_BPF_ARCH arm64)
  set(GP_BPF_MULTIARCH /usr/include/aarch64-linux-gnu)
endif()

set(gp_ebpf_missing "")
foreach(var GP_BPF_CLANG GP_BPFTOOL GP_BPF_A GP_BPF_INCLUDE GP_BPF_ARCH)
  if(NOT ${var})
    list(APPEND gp_ebpf_missing ${var})
  endif()
endforeach()
if(NOT EXISTS /usr/include/linux/bpf.h)
  list(APPEND gp_ebpf_missing linux-uapi-headers)
endif()
if(gp_ebpf_missing)
  message(STATUS "gpuperf: no eBPF CPU profiler (missing: ${gp_ebpf_missing}; install clang, "
                 "bpftool and libbpf-dev, or pass -DGPUPERF_WITH_EBPF=OFF to silence this)")
else()
  set(GPUPERF_HAVE_EBPF ON)
endif()
