// A statically linked program (no dynamic loader, so no dlopen anywhere in it) that maps a
// file named libcuda.so.1 the way the loader would: from outside it looks like a CUDA program
// gpuperf attach could load its library into, and it is not (tests/e2e/attach_refusals_test.sh).
//
//   static_cuda_holder LIBCUDA READY_FILE   maps LIBCUDA, makes READY_FILE, waits to be killed
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  if (mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) return 1;
  const int ready = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (ready < 0) return 1;
  close(ready);
  for (;;) pause();
}
