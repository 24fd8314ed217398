#include "cpython/python_runtime.h"

#include <cstdlib>

namespace gpuperf::inject {
namespace {

struct PyVersion {
  uint32_t major = 0, minor = 0;
  bool prerelease = false;
};

// Py_Version (3.11+) is PY_VERSION_HEX: major, minor, micro bytes, then release level
// (0xA alpha, 0xB beta, 0xC candidate, 0xF final) and serial nibbles.
PyVersion FromHex(unsigned long hex) {
  PyVersion v;
  v.major = (hex >> 24) & 0xff;
  v.minor = (hex >> 16) & 0xff;
  uint32_t level = (hex >> 4) & 0xf;
  v.prerelease = level == 0xA || level == 0xB;
  return v;
}

// Py_GetVersion() (3.10): "3.10.13 (main, ...". Alphas and betas read "3.10.0a1", "3.10.0b2".
PyVersion FromString(const char* text) {
  PyVersion v;
  if (text == nullptr) return v;
  char* end = nullptr;
  v.major = uint32_t(std::strtoul(text, &end, 10));
  if (*end != '.') return PyVersion{};
  v.minor = uint32_t(std::strtoul(end + 1, &end, 10));
  if (*end == '.') std::strtoul(end + 1, &end, 10);
  v.prerelease = *end == 'a' || *end == 'b';
  return v;
}

}  // namespace

PythonProbe ProbePythonRuntime(PySymbolLookup lookup, PyRuntimeView* view, uint32_t* version,
                               const char** why) {
  *version = 0;
  void* tss_getter = lookup("PyGILState_GetThisThreadState");
  if (tss_getter == nullptr) return PythonProbe::kAbsent;

  PyVersion v;
  if (auto* hex = static_cast<const unsigned long*>(lookup("Py_Version"))) {
    v = FromHex(*hex);
  } else if (auto* get = reinterpret_cast<const char* (*)()>(lookup("Py_GetVersion"))) {
    v = FromString(get());
  }
  *version = (v.major << 24) | (v.minor << 16);
  if (v.major == 0) {
    *why = "the CPython version could not be read";
    return PythonProbe::kRefused;
  }
  if (v.prerelease) {
    *why = "pre-release (alpha/beta) CPython builds are not supported";
    return PythonProbe::kRefused;
  }
  // Reference-debugging builds change object headers and frame layouts.
  if (lookup("_Py_NegativeRefcount") != nullptr || lookup("_Py_ForgetReference") != nullptr) {
    *why = "debug (Py_DEBUG/Py_TRACE_REFS) CPython builds are not supported";
    return PythonProbe::kRefused;
  }

  PyRuntimeView out;
  if (const PyLayout* builtin = BuiltinPyLayout(v.major, v.minor)) {
    out.layout = *builtin;
  } else if (v.major == 3 && v.minor >= 13) {
    if (!PyLayoutFromDebugOffsets(lookup("_PyRuntime"), v.major, v.minor, &out.layout, why)) {
      return PythonProbe::kRefused;
    }
  } else {
    *why = "only CPython 3.10 to 3.14 are supported";
    return PythonProbe::kRefused;
  }

  out.code_type = reinterpret_cast<uint64_t>(lookup("PyCode_Type"));
  out.unicode_type = reinterpret_cast<uint64_t>(lookup("PyUnicode_Type"));
  out.bytes_type = reinterpret_cast<uint64_t>(lookup("PyBytes_Type"));
  if (out.code_type == 0 || out.unicode_type == 0 || out.bytes_type == 0) {
    *why = "CPython's type objects (PyCode_Type, PyUnicode_Type, PyBytes_Type) were not found";
    return PythonProbe::kRefused;
  }
  out.thread_state = reinterpret_cast<void* (*)()>(tss_getter);
  *view = out;
  return PythonProbe::kReady;
}

}  // namespace gpuperf::inject
