// Test helpers for the .eh_frame parser and the table unwinder: a builder of small
// `.eh_frame` sections, and memory that ends right before an inaccessible page, so that a
// read past the end of the bytes under test crashes the test instead of passing unseen.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "unwind/eh_frame_parser.h"

namespace gpuperf::testing_util {

// Bytes placed so that the byte after the last one is in a PROT_NONE page.
class GuardedBytes {
 public:
  explicit GuardedBytes(const std::vector<uint8_t>& bytes)
      : GuardedBytes(bytes.data(), bytes.size()) {}
  GuardedBytes(const uint8_t* data, size_t size) : size_(size) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    data_pages_ = (size + page - 1) / page;
    map_size_ = (data_pages_ + 1) * page;
    void* map =
        mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = map == MAP_FAILED ? nullptr : static_cast<uint8_t*>(map);
    if (base_ == nullptr) return;
    mprotect(base_ + data_pages_ * page, page, PROT_NONE);
    start_ = base_ + data_pages_ * page - size;
    if (size > 0) std::memcpy(start_, data, size);
  }
  ~GuardedBytes() {
    if (base_ != nullptr) munmap(base_, map_size_);
  }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;

  bool ok() const { return base_ != nullptr; }
  uint8_t* data() { return start_; }
  size_t size() const { return size_; }
  // As if mapped at `address`.
  EhFrameBytes View(uint64_t address) const { return {start_, size_, address}; }

 private:
  uint8_t* base_ = nullptr;
  uint8_t* start_ = nullptr;
  size_t size_ = 0, data_pages_ = 0, map_size_ = 0;
};

// Writes CIEs and FDEs as GCC and GNU ld lay them out (FDE addresses pc-relative sdata4).
class EhFrameBuilder {
 public:
  // def_cfa rsp+8; the return address at cfa-8: every x86-64 CIE begins so.
  static std::vector<uint8_t> StandardInitialInstructions() {
    return {0x0c, 0x07, 0x08, 0x90, 0x01};
  }

  explicit EhFrameBuilder(uint64_t address) : address_(address) {}

  // Returns the CIE's offset. `augmentation_data` follows a "z" augmentation.
  size_t Cie(const std::string& augmentation = "zR",
             const std::vector<uint8_t>& augmentation_data = {0x1b},
             const std::vector<uint8_t>& initial = StandardInitialInstructions(),
             uint8_t version = 1, uint64_t code_align = 1) {
    const size_t start = BeginEntry();
    U32(0);  // CIE id
    bytes.push_back(version);
    bytes.insert(bytes.end(), augmentation.begin(), augmentation.end());
    bytes.push_back(0);
    Uleb(code_align);
    bytes.push_back(0x78);  // data alignment -8
    if (version == 1) {
      bytes.push_back(16);
    } else {
      Uleb(16);
    }
    if (!augmentation.empty() && augmentation[0] == 'z') {
      Uleb(augmentation_data.size());
      bytes.insert(bytes.end(), augmentation_data.begin(), augmentation_data.end());
    }
    bytes.insert(bytes.end(), initial.begin(), initial.end());
    EndEntry(start);
    return start;
  }

  // Returns the FDE's offset.
  size_t Fde(size_t cie, uint64_t pc_begin, uint32_t range, const std::vector<uint8_t>& program,
             bool with_augmentation_data = true) {
    const size_t start = BeginEntry();
    U32(static_cast<uint32_t>(bytes.size() - cie));  // CIE pointer: back from this field
    U32(static_cast<uint32_t>(pc_begin - (address_ + bytes.size())));
    U32(range);
    if (with_augmentation_data) Uleb(0);
    bytes.insert(bytes.end(), program.begin(), program.end());
    EndEntry(start);
    return start;
  }

  void Terminator() { U32(0); }

  // The pc-relative sdata4 encoding of `target` if written at offset `at`.
  uint32_t PcRelative(uint64_t target, size_t at) const {
    return static_cast<uint32_t>(target - (address_ + at));
  }

  void U32(uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  void Uleb(uint64_t value) {
    do {
      uint8_t byte = value & 0x7f;
      value >>= 7;
      bytes.push_back(value != 0 ? (byte | 0x80) : byte);
    } while (value != 0);
  }

  std::vector<uint8_t> bytes;

 private:
  size_t BeginEntry() {
    const size_t start = bytes.size();
    U32(0);  // length, filled in by EndEntry
    return start;
  }
  void EndEntry(size_t start) {
    while ((bytes.size() - start) % 4 != 0) bytes.push_back(0);  // DW_CFA_nop padding
    const auto length = static_cast<uint32_t>(bytes.size() - start - 4);
    std::memcpy(bytes.data() + start, &length, sizeof(length));
  }

  uint64_t address_;
};

}  // namespace gpuperf::testing_util
