// libcuda.so.1 for the fake CUDA app (FAKE_APP_LIBCUDA, tests/fakes/fake_app.cc): a library of
// that name mapped into the process is how gpuperf attach tells a CUDA program from another
// (src/attach/target.h). The fake app plays the driver itself; this only has to be there.
extern "C" __attribute__((visibility("default"))) int cuDriverGetVersion(int* version) {
  if (version != nullptr) *version = 13000;
  return 0;
}
