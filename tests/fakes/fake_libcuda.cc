// libcuda.so.1 for the fake CUDA app (FAKE_APP_LIBCUDA, tests/fakes/fake_app.cc): a library of
// that name mapped into the process is how gpuperf attach tells a CUDA program from another
// (src/attach/target.h). The fake app plays the driver itself; this only has to be there (and
// to hold the time a thread spends inside the driver: fake_cuda_busy).
extern "C" __attribute__((visibility("default"))) int cuDriverGetVersion(int* version) {
  if (version != nullptr) *version = 13000;
  return 0;
}

// For the attach tests' `cudaspin` phase: `rounds` rounds of arithmetic inside this library,
// as a program's thread spends most of its time inside libcuda (launching, and spinning in
// a synchronization), where gpuperf attach must not stop it for good.
extern "C" __attribute__((visibility("default"))) unsigned long long fake_cuda_busy(
    unsigned long long rounds) {
  volatile unsigned long long state = rounds;
  for (unsigned long long i = 0; i < rounds; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
  }
  return state;
}
