// What the recorder's unwind rules cost per file (src/ebpf/file_unwind_rules.h): compiling a
// file's whole `.eh_frame` (BuildFileUnwindTable, what the recorder did before) against
// indexing it (mapping it, reading its `.eh_frame_hdr`) and looking up N random code
// addresses, each of which compiles its FDE the first time. Prints one line per file and N:
//   whole_ms       the whole compile (median of the repetitions)
//   index_us       indexing alone
//   lookup_ms      index + N lookups of fresh addresses (compiling their FDEs)
//   fdes           FDEs compiled by those lookups
//   cold_ns        per lookup of a fresh address, indexing excluded
//   warm_ns        per lookup of an address seen before (the per-file cache)
//   table_ns       per lookup of the same addresses in the whole table, for comparison
//   all_ms         index + one lookup in every FDE the header lists (the worst case: what
//                  compiling them one by one costs against compiling them all at once)
// Random addresses fall in a random FDE (each FDE equally likely), anywhere in it.
//
//   sample_unwinder_bench [--lookups N,N,...] [--reps R] [FILE...]
// Without files: libc, libstdc++ and the largest shared libraries under
// /usr/lib/x86_64-linux-gnu (libLLVM, libclang, ... where installed).
//   sample_unwinder_bench --verify FILE...
// times nothing: checks each file's lazy rules against its whole table at every row start
// and in every FDE (file_unwind_verify.h), one line per file; exit 1 on any difference or a
// file that cannot be read (one both sides find no rules in is reported, not a difference).
#include <benchmark/benchmark.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ebpf/file_unwind_rules.h"
#include "ebpf/file_unwind_verify.h"
#include "unwind/table_walk.h"

namespace {

using gpuperf::ModuleTableStatus;
using gpuperf::ModuleUnwindTable;
using gpuperf::TableWalkStop;
using gpuperf::UnwindRule;
using gpuperf::ebpf::BuildFileUnwindTable;
using gpuperf::ebpf::FileUnwindRules;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point began) {
  return std::chrono::duration<double>(Clock::now() - began).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// libc, libstdc++, and the five largest shared libraries of the system's library directory.
std::vector<std::string> DefaultFiles() {
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  std::vector<std::pair<uint64_t, std::string>> libraries;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name.find(".so") == std::string::npos) continue;
      const std::string path = dir + "/" + name;
      struct stat st;
      if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        libraries.emplace_back(static_cast<uint64_t>(st.st_size), path);
      }
    }
    closedir(d);
  }
  std::sort(libraries.rbegin(), libraries.rend());
  std::vector<std::string> files = {dir + "/libc.so.6", dir + "/libstdc++.so.6"};
  for (size_t i = 0; i < libraries.size() && files.size() < 7; ++i) {
    files.push_back(libraries[i].second);
  }
  return files;
}

// N code addresses: a random FDE's start plus a random offset before the next FDE's.
std::vector<uint64_t> RandomAddresses(const FileUnwindRules& rules, size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<uint64_t> addresses;
  addresses.reserve(n);
  const size_t count = rules.fde_count();
  for (size_t i = 0; i < n && count > 1; ++i) {
    const size_t fde = random() % (count - 1);
    const uint64_t begin = rules.FdeInitialLocation(fde);
    const uint64_t next = rules.FdeInitialLocation(fde + 1);
    addresses.push_back(next > begin ? begin + random() % (next - begin) : begin);
  }
  return addresses;
}

// Seconds per lookup of `addresses` in the whole table.
double TableLookupSeconds(const ModuleUnwindTable& table, const std::vector<uint64_t>& addresses) {
  int found = 0;
  const auto began = Clock::now();
  for (uint64_t address : addresses) {
    UnwindRule rule;
    TableWalkStop stop;
    found += gpuperf::RuntimeRules::FindInTable(table, address, &rule, &stop) ? 1 : 0;
  }
  benchmark::DoNotOptimize(found);
  return Seconds(began) / static_cast<double>(std::max<size_t>(addresses.size(), 1));
}

int LookUp(FileUnwindRules& rules, const std::vector<uint64_t>& addresses) {
  int found = 0;
  for (uint64_t address : addresses) {
    UnwindRule rule;
    TableWalkStop stop;
    found += rules.Find(address, &rule, &stop) ? 1 : 0;
  }
  benchmark::DoNotOptimize(found);
  return found;
}

struct LazyRun {
  double index_s = 0, lookup_s = 0, warm_s = 0, table_s = 0;
  uint64_t fdes = 0;
};

LazyRun RunLazy(const std::string& path, const ModuleUnwindTable& table, size_t n, uint64_t seed) {
  LazyRun run;
  FileUnwindRules probe(path);  // the addresses, from an index of its own
  probe.Index();
  const std::vector<uint64_t> addresses = RandomAddresses(probe, n, seed);
  run.table_s = TableLookupSeconds(table, addresses);
  const auto began = Clock::now();
  FileUnwindRules rules(path);
  rules.Index();
  run.index_s = Seconds(began);
  LookUp(rules, addresses);
  run.lookup_s = Seconds(began);
  run.fdes = rules.fdes_compiled();
  const auto warm = Clock::now();
  LookUp(rules, addresses);
  run.warm_s = Seconds(warm);
  return run;
}

// Index + one lookup at the start of every FDE, in the header's order.
double RunAllFdes(const std::string& path) {
  const auto began = Clock::now();
  FileUnwindRules rules(path);
  rules.Index();
  std::vector<uint64_t> starts;
  starts.reserve(rules.fde_count());
  for (size_t i = 0; i < rules.fde_count(); ++i) starts.push_back(rules.FdeInitialLocation(i));
  LookUp(rules, starts);
  return Seconds(began);
}

std::vector<size_t> ParseList(const char* text) {
  std::vector<size_t> values;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    values.push_back(std::strtoull(p, &end, 10));
    if (*end != ',') break;
    p = end + 1;
  }
  return values;
}

void BenchFile(const std::string& path, const std::vector<size_t>& lookups, int reps) {
  FileUnwindRules check(path);
  check.Index();
  if (check.status() != ModuleTableStatus::kOk || check.compiled_whole()) {
    std::printf("%-44s status %s%s: skipped\n", path.c_str(),
                gpuperf::ModuleTableStatusName(check.status()),
                check.compiled_whole() ? " (no searchable header table)" : "");
    return;
  }
  std::vector<double> whole;
  std::unique_ptr<ModuleUnwindTable> table;
  for (int r = 0; r < reps; ++r) {
    const auto began = Clock::now();
    table = BuildFileUnwindTable(path);
    whole.push_back(Seconds(began));
  }
  std::vector<double> all;
  for (int r = 0; r < reps; ++r) all.push_back(RunAllFdes(path));
  const double whole_ms = Median(whole) * 1e3;
  std::printf("%-44s %6.1f MB %7llu FDEs %8zu rows  whole_ms %8.2f  all_ms %8.2f\n", path.c_str(),
              FileSize(path) / 1e6, static_cast<unsigned long long>(check.fde_count()),
              table->row_starts.size(), whole_ms, Median(all) * 1e3);
  for (size_t n : lookups) {
    std::vector<double> index, lookup, cold, warm, in_table;
    uint64_t fdes = 0;
    for (int r = 0; r < reps; ++r) {
      const LazyRun run = RunLazy(path, *table, n, 1000 + r);
      in_table.push_back(run.table_s);
      index.push_back(run.index_s);
      lookup.push_back(run.lookup_s);
      cold.push_back((run.lookup_s - run.index_s) / static_cast<double>(n));
      warm.push_back(run.warm_s / static_cast<double>(n));
      fdes = run.fdes;
    }
    std::printf(
        "    N %6zu  index_us %7.1f  lookup_ms %7.3f (%5.2f%% of whole)  fdes %6llu  "
        "cold_ns %6.0f  warm_ns %5.0f  table_ns %5.0f\n",
        n, Median(index) * 1e6, Median(lookup) * 1e3, 100 * Median(lookup) * 1e3 / whole_ms,
        static_cast<unsigned long long>(fdes), Median(cold) * 1e9, Median(warm) * 1e9,
        Median(in_table) * 1e9);
  }
}

// --verify: one line per file; false when any file's rules differ or could not be built.
bool VerifyFiles(const std::vector<std::string>& files) {
  bool all_agree = true;
  for (const std::string& path : files) {
    if (access(path.c_str(), R_OK) != 0) {
      std::printf("verify %s: cannot read the file\n", path.c_str());
      all_agree = false;
      continue;
    }
    const gpuperf::ebpf::FileRulesComparison c = gpuperf::ebpf::CompareFileRules(path, 7);
    if (c.whole_status == c.lazy_status && c.whole_status != gpuperf::ModuleTableStatus::kOk) {
      // Nothing to compare, and the same answer: a walk stops at this file either way.
      std::printf("verify %s: no rules from either (%s)\n", path.c_str(),
                  gpuperf::ModuleTableStatusName(c.whole_status));
      continue;
    }
    std::printf(
        "verify %s: %s, %llu addresses, %llu FDEs (%llu compiled), %llu rows, %llu differ\n",
        path.c_str(), c.agrees() ? "agree" : "DIFFER", static_cast<unsigned long long>(c.addresses),
        static_cast<unsigned long long>(c.fdes), static_cast<unsigned long long>(c.fdes_compiled),
        static_cast<unsigned long long>(c.rows), static_cast<unsigned long long>(c.mismatches));
    if (!c.agrees()) {
      std::printf("  whole %s, lazy %s%s\n", gpuperf::ModuleTableStatusName(c.whole_status),
                  gpuperf::ModuleTableStatusName(c.lazy_status),
                  c.lazy_compiled_whole ? " (compiled whole)" : "");
    }
    for (const std::string& line : c.first_mismatches) std::printf("  %s\n", line.c_str());
    all_agree = all_agree && c.agrees();
  }
  return all_agree;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> lookups = {1000, 3000, 30000};
  int reps = 5;
  bool verify = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--verify") == 0) {
      verify = true;
    } else if (std::strcmp(argv[i], "--lookups") == 0 && i + 1 < argc) {
      lookups = ParseList(argv[++i]);
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) files = DefaultFiles();
  if (verify) return VerifyFiles(files) ? 0 : 1;
  for (const std::string& path : files) BenchFile(path, lookups, reps);
  return 0;
}
