// The recorder's .eh_frame unwinding of stack copies, on this process's own stack: tables
// built from the files on disk (placed at their load addresses) must walk a copy of the
// stack, taken as the BPF program takes it, through the test's own frames; copies of
// garbage must end without a fault.
#include "ebpf/sample_unwinder.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ebpf/file_unwind_rules.h"
#include "ebpf/file_unwind_verify.h"

namespace gpuperf::ebpf {
namespace {

// This thread's stack end, or 0.
uint64_t StackHigh() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* low = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  return reinterpret_cast<uint64_t>(low) + size;
}

// Takes the registers at an instruction of this function and copies the stack above them,
// as on_cpu_sample does; `*return_address` is where this function returns to.
__attribute__((noinline)) void CopyOwnStack(gp_user_stack_copy* copy, uint64_t* return_address) {
  uint64_t ip, sp, bp;
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
  copy->ip = ip;
  copy->sp = sp;
  copy->bp = bp;
  const uint64_t high = StackHigh();
  copy->size = static_cast<uint32_t>(std::min<uint64_t>(GP_STACK_COPY_BYTES, high - sp));
  std::memcpy(copy->words, reinterpret_cast<const void*>(sp), copy->size);
  *return_address = reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

std::unique_ptr<SampleUnwinder> UnwinderOfThisProcess() {
  auto unwinder = std::make_unique<SampleUnwinder>();
  std::map<std::string, ElfLayout> cache;
  for (const MappedModule& m : ReadProcessModules(static_cast<uint32_t>(getpid()), cache)) {
    unwinder->AddModule(static_cast<uint32_t>(getpid()), m);
  }
  return unwinder;
}

__attribute__((noinline)) TableWalkResult UnwindHere(SampleUnwinder& unwinder, uint64_t* pcs,
                                                     uint64_t* caller, uint64_t* here) {
  auto copy = std::make_unique<gp_user_stack_copy>();
  CopyOwnStack(copy.get(), caller);
  *here = copy->ip;
  const TableWalkResult r =
      unwinder.Unwind(static_cast<uint32_t>(getpid()), *copy, pcs, GP_MAX_STACK_DEPTH);
  asm volatile("" ::: "memory");  // keeps this frame (no tail call)
  return r;
}

TEST(SampleUnwinder, WalksACopyOfThisThreadsStackWithTablesFromTheFiles) {
  auto unwinder = UnwinderOfThisProcess();
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  uint64_t caller = 0, here = 0;
  const TableWalkResult r = UnwindHere(*unwinder, pcs, &caller, &here);
  EXPECT_TRUE(r.complete() || r.stop == TableWalkStop::kEndOfCopy) << static_cast<int>(r.stop);
  ASSERT_GE(r.depth, 4);
  EXPECT_EQ(pcs[0], here);    // the "interrupted" instruction
  EXPECT_EQ(pcs[1], caller);  // into UnwindHere
  // Only the modules the walk went through were built (lazily), each once.
  const uint64_t built = unwinder->tables_built();
  EXPECT_GE(built, 1u);
  UnwindHere(*unwinder, pcs, &caller, &here);
  EXPECT_EQ(unwinder->tables_built(), built);
}

TEST(SampleUnwinder, ProcessesMappingAFileElsewhereShareItsTable) {
  // A second "process" maps every module of this one `delta` higher: its copy is this
  // stack's with the return addresses moved as far. It unwinds to the same PCs moved by
  // delta, with the tables the first walk built (per file, not per load address).
  auto unwinder = std::make_unique<SampleUnwinder>();
  const auto pid = static_cast<uint32_t>(getpid());
  constexpr uint32_t kOther = 1u << 30;  // no real pid is that high (pid_max <= 2^22)
  constexpr uint64_t delta = uint64_t{1} << 40;
  std::map<std::string, ElfLayout> cache;
  for (MappedModule m : ReadProcessModules(pid, cache)) {
    unwinder->AddModule(pid, m);
    m.start += delta;
    m.end += delta;
    m.load_bias += delta;
    unwinder->AddModule(kOther, m);
  }
  auto copy = std::make_unique<gp_user_stack_copy>();
  uint64_t caller = 0;
  CopyOwnStack(copy.get(), &caller);
  uint64_t pcs[GP_MAX_STACK_DEPTH], moved_pcs[GP_MAX_STACK_DEPTH];
  const TableWalkResult r = unwinder->Unwind(pid, *copy, pcs, GP_MAX_STACK_DEPTH);
  ASSERT_GE(r.depth, 4);
  const uint64_t built = unwinder->tables_built();
  const size_t words = std::min<size_t>(copy->size, GP_STACK_COPY_BYTES) / 8;
  for (size_t i = 0; i < words; ++i) {
    if (std::find(pcs + 1, pcs + r.depth, copy->words[i]) != pcs + r.depth) copy->words[i] += delta;
  }
  copy->ip += delta;
  const TableWalkResult moved = unwinder->Unwind(kOther, *copy, moved_pcs, GP_MAX_STACK_DEPTH);
  EXPECT_EQ(moved.stop, r.stop) << static_cast<int>(moved.stop);
  ASSERT_EQ(moved.depth, r.depth);
  for (int i = 0; i < r.depth; ++i) EXPECT_EQ(moved_pcs[i], pcs[i] + delta) << i;
  EXPECT_EQ(unwinder->tables_built(), built);
}

TEST(SampleUnwinder, TheFirstWalkCompilesOnlyTheFdesOfItsFrames) {
  // A fresh unwinder's first walk unwinds whole, without waiting for anything: it indexes
  // the files it passes through and compiles one FDE per frame at most (the frames of one
  // function share it). The same copy again indexes and compiles nothing more.
  auto unwinder = UnwinderOfThisProcess();
  auto copy = std::make_unique<gp_user_stack_copy>();
  uint64_t caller = 0;
  CopyOwnStack(copy.get(), &caller);
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  const auto pid = static_cast<uint32_t>(getpid());
  EXPECT_EQ(unwinder->tables_built(), 0u);
  const TableWalkResult first = unwinder->Unwind(pid, *copy, pcs, GP_MAX_STACK_DEPTH);
  EXPECT_TRUE(first.complete() || first.stop == TableWalkStop::kEndOfCopy)
      << static_cast<int>(first.stop);
  ASSERT_GE(first.depth, 4);
  const uint64_t files = unwinder->tables_built(), fdes = unwinder->fdes_compiled();
  EXPECT_GE(files, 1u);
  EXPECT_LE(files, static_cast<uint64_t>(first.depth));
  EXPECT_GE(fdes, 2u);
  EXPECT_LE(fdes, static_cast<uint64_t>(first.depth));
  EXPECT_GT(unwinder->build_ns(), 0u);
  const TableWalkResult again = unwinder->Unwind(pid, *copy, pcs, GP_MAX_STACK_DEPTH);
  EXPECT_EQ(again.depth, first.depth);
  EXPECT_EQ(unwinder->tables_built(), files);
  EXPECT_EQ(unwinder->fdes_compiled(), fdes);
}

TEST(SampleUnwinder, UnknownProcessesAndEmptyCopiesAreNotWalked) {
  SampleUnwinder unwinder;
  auto copy = std::make_unique<gp_user_stack_copy>();
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  copy->size = 64;
  copy->sp = 0x7000;
  EXPECT_EQ(unwinder.Unwind(1, *copy, pcs, GP_MAX_STACK_DEPTH).depth, 0);
}

TEST(SampleUnwinder, GarbageCopiesEndWithoutAFault) {
  // A copy of the real stack with words replaced at random by code addresses, stack
  // addresses and noise, and registers at random: every walk ends, inside the copy.
  auto unwinder = UnwinderOfThisProcess();
  auto real = std::make_unique<gp_user_stack_copy>();
  uint64_t caller = 0;
  CopyOwnStack(real.get(), &caller);
  auto copy = std::make_unique<gp_user_stack_copy>();
  std::mt19937_64 random(3);
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  const uint32_t pid = static_cast<uint32_t>(getpid());
  unwinder->Unwind(pid, *real, pcs, GP_MAX_STACK_DEPTH);  // the real stack's rules, compiled
  for (int round = 0; round < 3000; ++round) {
    std::memcpy(copy.get(), real.get(), sizeof(*copy));
    copy->size = static_cast<uint32_t>(random() % (GP_STACK_COPY_BYTES + 64));
    const size_t words = std::min<size_t>(real->size, GP_STACK_COPY_BYTES) / 8;
    for (int i = 0; i < 200 && words > 0; ++i) {
      uint64_t& word = copy->words[random() % words];
      switch (random() % 3) {
        case 0:
          word = caller + random() % 4096 - 2048;
          break;
        case 1:
          word = real->sp + random() % (2 * GP_STACK_COPY_BYTES);
          break;
        default:
          word = random();
          break;
      }
    }
    if (round % 2 == 0) copy->ip = caller + random() % 256;
    if (round % 3 == 0) copy->bp = random();
    if (round % 5 == 0) copy->sp = random();
    const TableWalkResult r = unwinder->Unwind(pid, *copy, pcs, GP_MAX_STACK_DEPTH);
    ASSERT_LE(r.depth, GP_MAX_STACK_DEPTH);
  }
}

// --- The lazy rules of a file against its whole table (BuildFileUnwindTable). ---

// Real files to compare: libc, libstdc++ and this test's own binary (those present).
std::vector<std::string> RealFiles() {
  std::vector<std::string> files;
  for (const char* path :
       {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib64/libstdc++.so.6"}) {
    struct stat st;
    if (stat(path, &st) == 0) files.push_back(path);
  }
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) files.emplace_back(self, static_cast<size_t>(n));
  return files;
}

TEST(FileUnwindRules, GiveTheWholeTablesRuleEverywhere) {
  // Every row start of the whole table and the byte before it, and in every FDE the header
  // lists: its first two bytes, a random one, and the last before the next FDE
  // (file_unwind_verify.h).
  const std::vector<std::string> files = RealFiles();
  ASSERT_GE(files.size(), 2u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const FileRulesComparison c = CompareFileRules(path, 7);
    ASSERT_EQ(c.whole_status, ModuleTableStatus::kOk);
    ASSERT_EQ(c.lazy_status, ModuleTableStatus::kOk);
    ASSERT_FALSE(c.lazy_compiled_whole);
    for (const std::string& line : c.first_mismatches) ADD_FAILURE() << line;
    EXPECT_EQ(c.mismatches, 0u) << "of " << c.addresses << " addresses";
    EXPECT_GT(c.addresses, 2 * c.rows);
    EXPECT_EQ(c.fdes_compiled, c.fdes);  // every FDE was looked into
    EXPECT_TRUE(c.agrees());
    std::printf("%s: %llu addresses, %llu FDEs, %llu rows agree\n", path.c_str(),
                static_cast<unsigned long long>(c.addresses),
                static_cast<unsigned long long>(c.fdes), static_cast<unsigned long long>(c.rows));
  }
}

TEST(FileUnwindRules, IndexingABigFileCompilesNoFdeUntilAsked) {
  std::string path;
  uint64_t largest = 0;
  for (const std::string& candidate : RealFiles()) {
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) > largest) {
      largest = static_cast<uint64_t>(st.st_size);
      path = candidate;
    }
  }
  ASSERT_FALSE(path.empty());
  FileUnwindRules rules(path);
  EXPECT_FALSE(rules.indexed());
  rules.Index();
  ASSERT_EQ(rules.status(), ModuleTableStatus::kOk);
  EXPECT_FALSE(rules.compiled_whole());
  EXPECT_GT(rules.fde_count(), 1000u) << path;
  EXPECT_EQ(rules.fdes_compiled(), 0u);
  const uint64_t middle = rules.FdeInitialLocation(rules.fde_count() / 2);
  UnwindRule rule;
  TableWalkStop stop;
  EXPECT_TRUE(rules.Find(middle, &rule, &stop)) << static_cast<int>(stop);
  EXPECT_EQ(rules.fdes_compiled(), 1u);
  EXPECT_TRUE(rules.Find(middle, &rule, &stop));  // cached: nothing compiled again
  EXPECT_TRUE(rules.Find(middle + 1, &rule, &stop) || stop == TableWalkStop::kNoRow);
  EXPECT_EQ(rules.fdes_compiled(), 1u);
}

// A copy of libc's bytes, and where its `.eh_frame_hdr` lies in them.
struct ImageCopy {
  std::vector<uint8_t> bytes;
  size_t hdr = 0, hdr_size = 0;
  uint64_t hdr_address = 0;  // its virtual address; .eh_frame lies in the same segment
};

bool CopyWithHeader(const std::string& path, ImageCopy* out) {
  std::ifstream in(path, std::ios::binary);
  out->bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  Elf64_Ehdr eh;
  if (out->bytes.size() < sizeof(eh)) return false;
  std::memcpy(&eh, out->bytes.data(), sizeof(eh));
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, out->bytes.data() + eh.e_phoff + i * sizeof(ph), sizeof(ph));
    if (ph.p_type != PT_GNU_EH_FRAME) continue;
    out->hdr = ph.p_offset;
    out->hdr_size = ph.p_filesz;
    out->hdr_address = ph.p_vaddr;
    // version 1, eh_frame_ptr pcrel sdata4, fde_count udata4, table datarel sdata4
    const uint8_t* h = out->bytes.data() + out->hdr;
    return h[0] == 1 && h[1] == 0x1b && h[2] == 0x03 && h[3] == 0x3b && out->hdr_size > 12;
  }
  return false;
}

// Addresses across an image of `span` bytes: random ones, and in each FDE `fdes` lists
// (an index of the undamaged file) its first byte and a random one.
std::vector<uint64_t> AddressesToTry(FileUnwindRules& fdes, uint64_t span,
                                     std::mt19937_64& random) {
  std::vector<uint64_t> addresses;
  for (int i = 0; i < 20000; ++i) addresses.push_back(random() % span);
  fdes.Index();
  for (size_t i = 0; i + 1 < fdes.fde_count(); ++i) {
    const uint64_t begin = fdes.FdeInitialLocation(i), next = fdes.FdeInitialLocation(i + 1);
    addresses.push_back(begin);
    if (next > begin) addresses.push_back(begin + random() % (next - begin));
  }
  return addresses;
}

// Indexes the damaged image and looks every address up: none may crash, and each must get
// the rule the whole compile of the same bytes gives. Returns how many found a rule.
int ExpectSameAsWhole(const ImageCopy& image, const std::vector<uint64_t>& addresses,
                      bool expect_whole) {
  FileUnwindRules rules("damaged", image.bytes.data(), image.bytes.size());
  rules.Index();
  EXPECT_EQ(rules.compiled_whole(), expect_whole);
  const std::unique_ptr<ModuleUnwindTable> whole =
      BuildFileUnwindTable("damaged", image.bytes.data(), image.bytes.size());
  int found = 0, mismatches = 0;
  for (uint64_t address : addresses) {
    const std::string differs = RulesDiffer(*whole, rules, address);
    if (!differs.empty() && ++mismatches <= 5) ADD_FAILURE() << differs;
    UnwindRule rule;
    TableWalkStop stop;
    found += rules.Find(address, &rule, &stop) ? 1 : 0;
  }
  EXPECT_EQ(mismatches, 0);
  return found;
}

// Field `field` (0: initial location, 1: FDE address) of entry `i` of the header table.
uint8_t* HdrField(ImageCopy* image, uint32_t i, int field) {
  return image->bytes.data() + image->hdr + 12 + 8 * i + 4 * field;
}
void SetFdeAddress(ImageCopy* image, uint32_t i, int32_t value) {
  std::memcpy(HdrField(image, i, 1), &value, sizeof(value));
}

// Makes entry `i` (> 0) begin halfway into the FDE before it, in the header only, and
// unusable: its FDE address outside .eh_frame (`how` 0), or its FDE's own initial location
// moved 2 GiB away, outside the file (`how` 1: a pcrel sdata4 field, as GNU ld writes).
// The whole table leaves it out and keeps the FDE before it up to that one's end.
void HideFdeOverTheOneBefore(ImageCopy* image, uint32_t i, int how) {
  int32_t before, location, fde;
  std::memcpy(&before, HdrField(image, i - 1, 0), 4);
  std::memcpy(&location, HdrField(image, i, 0), 4);
  std::memcpy(&fde, HdrField(image, i, 1), 4);
  const int32_t halfway = before + (location - before) / 2;
  std::memcpy(HdrField(image, i, 0), &halfway, 4);
  if (how == 0) {
    SetFdeAddress(image, i, INT32_MAX - 3);
    return;
  }
  const size_t pc_begin = image->hdr + static_cast<size_t>(static_cast<int64_t>(fde)) + 8;
  if (pc_begin + 4 > image->bytes.size()) return;
  const int32_t far = INT32_MAX - 0x100;
  std::memcpy(image->bytes.data() + pc_begin, &far, 4);
}

TEST(FileUnwindRules, ADamagedHeaderTableNeverCrashes) {
  const std::string libc = RealFiles().front();
  ImageCopy image;
  ASSERT_TRUE(CopyWithHeader(libc, &image)) << libc;
  std::mt19937_64 random(11);
  FileUnwindRules undamaged(libc);
  const std::vector<uint64_t> addresses = AddressesToTry(undamaged, image.bytes.size() * 2, random);
  uint32_t count;
  std::memcpy(&count, image.bytes.data() + image.hdr + 8, sizeof(count));
  ASSERT_GT(count, 0u);
  {
    // Every FDE address outside .eh_frame, below and far above it: no rules.
    ImageCopy damaged = image;
    for (uint32_t i = 0; i < count; ++i) {
      SetFdeAddress(&damaged, i, i % 2 == 0 ? INT32_MIN + static_cast<int32_t>(i) : INT32_MAX - 3);
    }
    EXPECT_EQ(ExpectSameAsWhole(damaged, addresses, false), 0);
  }
  {
    // Every fifth FDE unusable, and listed as beginning inside the one before: the lookup
    // steps back to that one, as the whole table keeps it.
    ImageCopy damaged = image;
    for (uint32_t i = 5; i < count; i += 5) HideFdeOverTheOneBefore(&damaged, i, (i / 5) % 2);
    EXPECT_GT(ExpectSameAsWhole(damaged, addresses, false), 0);
  }
  {
    // Random FDE addresses, some inside .eh_frame but not at an FDE: no crash.
    ImageCopy damaged = image;
    for (uint32_t i = 0; i < count; ++i) SetFdeAddress(&damaged, i, static_cast<int32_t>(random()));
    FileUnwindRules rules("noise", damaged.bytes.data(), damaged.bytes.size());
    for (uint64_t address : addresses) {
      UnwindRule rule;
      TableWalkStop stop;
      rules.Find(address, &rule, &stop);
    }
  }
  {
    // A count larger than the header holds: the table is not read; the file is compiled
    // whole (front to back), as BuildFileUnwindTable does.
    ImageCopy damaged = image;
    const auto too_many = static_cast<uint32_t>(damaged.hdr_size);
    std::memcpy(damaged.bytes.data() + damaged.hdr + 8, &too_many, sizeof(too_many));
    EXPECT_GT(ExpectSameAsWhole(damaged, addresses, true), 0);
  }
  {
    // The file cut inside its header: no rules, never a crash.
    ImageCopy damaged = image;
    damaged.bytes.resize(damaged.hdr + 10);
    EXPECT_EQ(ExpectSameAsWhole(damaged, addresses, false), 0);
  }
}

}  // namespace
}  // namespace gpuperf::ebpf
