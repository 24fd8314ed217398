// _gpuperf_pyframes_probe: a CPython extension that runs the frame walker the way the
// CUDA launch callback does, for check_frames.py to compare with the interpreter's own
// view. Built against the limited API of 3.10, so one build loads in 3.10 to 3.14.
//
// walk() releases the GIL (as PyTorch does before it dispatches to CUDA), walks the
// calling thread, interns its code objects and drains the new ones, then takes the GIL
// back and returns [(name, filename, line, is_entry, instr_offset), ...], innermost first,
// with lines resolved from the copied line tables and incomplete frames left out, as the
// reader of a trace does (cpython/python_lines.h PythonFrameIsIncomplete).
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030a0000
#include <Python.h>

#include <thread>
#include <vector>

#include "cpython/python_lines.h"
#include "inject/python/python_frames.h"

namespace {

using gpuperf::PyCodeInfo;
using namespace gpuperf::inject;

std::vector<PyCodeInfo> g_codes;  // drained so far; ids are 1-based and dense
std::vector<const char*> g_notices;

void RecordNotice(const char* line) {
  g_notices.push_back(line);
}

const PyCodeInfo* CodeById(uint32_t id) {
  return id >= 1 && id <= g_codes.size() ? &g_codes[id - 1] : nullptr;
}

PyObject* Init(PyObject*, PyObject*) {
  PythonFramesState state = InitPythonFrames(RecordNotice);
  static const char* kNames[] = {"off", "absent", "ready", "refused"};
  uint32_t version = PythonFramesVersion();
  return Py_BuildValue("(sII)", kNames[int(state)], version >> 24, (version >> 16) & 0xff);
}

PyObject* Walk(PyObject*, PyObject*) {
  PyFrameSample samples[kMaxPythonFrames];
  uint32_t ids[kMaxPythonFrames];
  int n = 0, failed = 0;
  std::vector<PyCodeInfo> fresh;
  Py_BEGIN_ALLOW_THREADS n = WalkPythonFrames(samples, kMaxPythonFrames);
  failed = InternPythonFrames(samples, n, ids);
  DrainNewPythonCodes(fresh);
  Py_END_ALLOW_THREADS for (PyCodeInfo& code : fresh) g_codes.push_back(std::move(code));
  if (failed != 0) {
    PyErr_Format(PyExc_RuntimeError, "%d frames were not interned", failed);
    return nullptr;
  }
  struct Shown {
    const PyCodeInfo* code;
    uint32_t instr_offset;
    bool entry;
  };
  std::vector<Shown> shown;
  for (int i = 0; i < n; ++i) {
    const PyCodeInfo* code = CodeById(ids[i]);
    if (code == nullptr) {
      PyErr_Format(PyExc_RuntimeError, "frame %d has unknown code id %u", i, ids[i]);
      return nullptr;
    }
    const bool entry = (samples[i].flags & kPyFrameEntry) != 0;
    if (gpuperf::PythonFrameIsIncomplete(code->python_version, code->first_traceable,
                                         samples[i].instr_offset,
                                         PyFrameIsGenerator(samples[i].flags))) {
      if (entry && !shown.empty()) shown.back().entry = true;
      continue;
    }
    shown.push_back({code, samples[i].instr_offset, entry});
  }
  PyObject* list = PyList_New(0);
  for (size_t i = 0; list != nullptr && i < shown.size(); ++i) {
    const PyCodeInfo* code = shown[i].code;
    PyObject* item = Py_BuildValue("(s#s#iOI)", code->name.data(), Py_ssize_t(code->name.size()),
                                   code->filename.data(), Py_ssize_t(code->filename.size()),
                                   gpuperf::ResolvePythonLine(*code, shown[i].instr_offset),
                                   shown[i].entry ? Py_True : Py_False, shown[i].instr_offset);
    if (item == nullptr || PyList_Append(list, item) != 0) {
      Py_XDECREF(item);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return list;
}

// A thread the interpreter never saw: it has no thread state, so no frames.
PyObject* WalkFromNativeThread(PyObject*, PyObject*) {
  int n = -1;
  Py_BEGIN_ALLOW_THREADS std::thread([&n] {
    PyFrameSample samples[4];
    n = WalkPythonFrames(samples, 4);
  }).join();
  Py_END_ALLOW_THREADS return PyLong_FromLong(n);
}

PyObject* Counters(PyObject*, PyObject*) {
  PythonFramesCounters c = GetPythonFramesCounters();
  return Py_BuildValue("{sKsKsKsKsKsKsKsKsn}", "no_thread_state", c.no_thread_state, "refused",
                       c.refused, "truncated", c.truncated, "broken", c.broken, "skipped_frames",
                       c.skipped_frames, "codes", c.codes, "intern_failed", c.intern_failed,
                       "unreadable_names", c.unreadable_names, "notices",
                       Py_ssize_t(g_notices.size()));
}

// resolve(linetable, firstlineno, minor, unit): the offline resolver on a table from
// code.co_linetable, for comparison with code.co_lines().
PyObject* Resolve(PyObject*, PyObject* args) {
  const char* table = nullptr;
  Py_ssize_t size = 0;
  int first_line = 0, minor = 0;
  unsigned int unit = 0;
  if (!PyArg_ParseTuple(args, "y#iiI", &table, &size, &first_line, &minor, &unit)) return nullptr;
  auto format = minor >= 11 ? gpuperf::PyLineTableFormat::kLocations311
                            : gpuperf::PyLineTableFormat::kLineTable310;
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(table), size_t(size));
  return PyLong_FromLong(gpuperf::ResolvePythonLine(format, first_line, bytes, unit));
}

PyMethodDef kMethods[] = {
    {"init", Init, METH_NOARGS, "init() -> (state, major, minor)"},
    {"walk", Walk, METH_NOARGS, "walk() -> [(name, filename, line, is_entry, instr_offset)]"},
    {"walk_from_native_thread", WalkFromNativeThread, METH_NOARGS,
     "frames seen by a thread without a thread state"},
    {"counters", Counters, METH_NOARGS, "the walker's counters"},
    {"resolve", Resolve, METH_VARARGS, "resolve(linetable, firstlineno, minor, unit) -> line"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "_gpuperf_pyframes_probe",
                       nullptr,
                       -1,
                       kMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__gpuperf_pyframes_probe() {
  return PyModule_Create(&kModule);
}
