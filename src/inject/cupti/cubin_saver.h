// Every module's cubin, saved at load as <trace dir>/cubins/<crc>.cubin under the CRC CUPTI gives
// PC samples, so that `record` maps the samples' PCs to source lines after the run. Modules
// load in the application's thread (lazily, at first use): saving is one file write there.
#pragma once

#include <cupti.h>

#include <vector>

#include "gpuperf/records.h"

namespace gpuperf::inject {

struct Recorder;

void StartSavingCubins(Recorder& recorder);
// From the MODULE_LOADED callback.
void SaveCubin(const CUpti_ModuleResourceData* module);
// The records of cubins saved since the last call (for the writer).
void TakeSavedCubins(std::vector<CubinRecord>& out);

}  // namespace gpuperf::inject
