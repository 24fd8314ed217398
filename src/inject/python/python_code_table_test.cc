#include "inject/python/python_code_table.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "python/fake_python.h"

namespace gpuperf::inject {
namespace {

using testing::FakeCodeSpec;
using testing::FakePython;
using testing::FakeVersion;

class PyCodeTableTest : public ::testing::TestWithParam<FakeVersion> {
 protected:
  bool HasQualname() const { return GetParam() != FakeVersion::k310; }
  PyCodeInfo InternAndDrain(uint64_t code) {
    uint32_t id = table_.Intern(fake_.view(), code);
    std::vector<PyCodeInfo> out;
    table_.DrainNew(out);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(out.empty() ? 0 : out[0].id, id);
    return out.empty() ? PyCodeInfo{} : out[0];
  }

  FakePython fake_{GetParam()};
  PyCodeTable table_;
  std::unique_ptr<PyCodeCache> cache_ = std::make_unique<PyCodeCache>();
};

TEST_P(PyCodeTableTest, CopiesNamesFirstLineAndLineTable) {
  FakeCodeSpec spec;
  spec.name = U"forward";
  spec.qualname = U"Block.forward";
  spec.filename = U"/src/model.py";
  spec.first_line = 80;
  spec.line_table = {0xE8, 0x0E, 0x82, 0x05};  // 3.11 format: +7, then 3 more units there
  spec.code_units = 40;
  spec.first_traceable = 3;
  PyCodeInfo info = InternAndDrain(fake_.NewCode(spec));
  EXPECT_EQ(info.name, HasQualname() ? "Block.forward" : "forward");
  EXPECT_EQ(info.filename, "/src/model.py");
  EXPECT_EQ(info.first_line, 80);
  EXPECT_EQ(info.code_units, 40u);
  // For the reader's incomplete-frame test; 3.10 has no _co_firsttraceable.
  EXPECT_EQ(info.first_traceable, GetParam() == FakeVersion::k310 ? 0u : 3u);
  EXPECT_EQ(info.python_version, fake_.version_hex());
  EXPECT_EQ(info.line_table, std::string("\xE8\x0E\x82\x05", 4));
  EXPECT_EQ(info.line_format, fake_.view().layout.line_format);
  if (info.line_format == PyLineTableFormat::kLocations311) {
    EXPECT_EQ(ResolvePythonLine(info, 2), 87);
  }
}

TEST_P(PyCodeTableTest, SameCodeSameIdOthersNewIds) {
  uint64_t a = fake_.NewCode({}), b = fake_.NewCode({});
  uint32_t id_a = table_.Intern(fake_.view(), a);
  EXPECT_EQ(id_a, 1u);
  EXPECT_EQ(table_.Intern(fake_.view(), a), id_a);
  EXPECT_EQ(table_.Intern(fake_.view(), b), 2u);
  EXPECT_EQ(table_.size(), 2u);
  // The batch form, as the launch callback uses it: known, new and null code objects.
  PyFrameSample frames[4];
  frames[0].code = b;
  frames[1].code = fake_.NewCode({});
  frames[2].code = 0;
  frames[3].code = a;
  uint32_t ids[4];
  EXPECT_EQ(table_.InternAll(fake_.view(), frames, 4, ids, *cache_), 1);
  EXPECT_EQ(ids[0], 2u);
  EXPECT_EQ(ids[1], 3u);
  EXPECT_EQ(ids[2], 0u);
  EXPECT_EQ(ids[3], id_a);
}

TEST_P(PyCodeTableTest, AReusedAddressGetsItsOwnEntry) {
  FakeCodeSpec first;
  first.name = first.qualname = U"old";
  uint64_t code = fake_.NewCode(first);
  uint32_t old_id = table_.Intern(fake_.view(), code);
  // Another code object now lives at the same address: new name object, new first line.
  const PyLayout& l = fake_.view().layout;
  fake_.SetCodeField(code, l.code_qualname >= 0 ? l.code_qualname : l.code_name,
                     fake_.NewString(U"new"));
  fake_.SetCodeField(code, l.code_first_line, 99);
  uint32_t new_id = table_.Intern(fake_.view(), code);
  EXPECT_NE(new_id, old_id);
  std::vector<PyCodeInfo> out;
  table_.DrainNew(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "old");
  EXPECT_EQ(out[1].name, "new");
  EXPECT_EQ(out[1].first_line, 99);
}

// The thread cache in front of the table, as the launch callback uses it.
class PyCodeCacheTest : public PyCodeTableTest {
 protected:
  // Looks `code` up through the cache; the id, and whether the cache missed.
  uint32_t Look(uint64_t code, bool* missed = nullptr) {
    PyFrameSample frame;
    frame.code = code;
    uint32_t id = 0;
    const uint64_t misses = table_.cache_misses();
    const int failed = table_.InternAll(fake_.view(), &frame, 1, &id, *cache_);
    EXPECT_EQ(failed, id == 0 ? 1 : 0);
    if (missed != nullptr) *missed = table_.cache_misses() != misses;
    return id;
  }
  std::string NameOf(uint32_t id) {
    drained_.clear();
    table_.DrainNew(drained_);
    for (const PyCodeInfo& info : drained_) names_[info.id] = info.name;
    return names_[id];
  }
  std::vector<PyCodeInfo> drained_;
  std::map<uint32_t, std::string> names_;
};

TEST_P(PyCodeCacheTest, ASecondLookHitsWithTheTablesId) {
  uint64_t a = fake_.NewCode({}), b = fake_.NewCode({});
  bool missed = false;
  uint32_t id_a = Look(a, &missed);
  EXPECT_TRUE(missed);
  EXPECT_EQ(Look(a, &missed), id_a);
  EXPECT_FALSE(missed);
  EXPECT_EQ(table_.Intern(fake_.view(), a), id_a);
  uint32_t id_b = Look(b, &missed);
  EXPECT_TRUE(missed);
  EXPECT_NE(id_b, id_a);
  EXPECT_EQ(Look(b, &missed), id_b);
  EXPECT_FALSE(missed);
}

// A code object freed and another made at its address: every field of the key that can
// tell them apart makes the cache miss, and the new object gets its own id and name.
TEST_P(PyCodeCacheTest, AReusedAddressNeverHitsTheOldEntry) {
  FakeCodeSpec spec;
  spec.name = spec.qualname = U"old";
  spec.code_version = 7;
  uint64_t code = fake_.NewCode(spec);
  const uint32_t old_id = Look(code);
  ASSERT_EQ(NameOf(old_id), "old");
  const PyLayout& l = fake_.view().layout;
  const int32_t name_at = l.code_qualname >= 0 ? l.code_qualname : l.code_name;
  std::vector<uint32_t> ids = {old_id};
  auto expect_new = [&](const char* what) {
    bool missed = false;
    uint32_t id = Look(code, &missed);
    EXPECT_TRUE(missed) << what;
    for (uint32_t earlier : ids) EXPECT_NE(id, earlier) << what;
    ids.push_back(id);
    EXPECT_EQ(Look(code, &missed), id) << what;
    EXPECT_FALSE(missed) << what;
    return id;
  };
  fake_.SetCodeField(code, name_at, fake_.NewString(U"new"));
  EXPECT_EQ(NameOf(expect_new("name")), "new");
  fake_.SetCodeField32(code, l.code_first_line, 99);
  expect_new("first line");
  if (l.code_version >= 0) {
    // 3.12+: everything else alike (a recompiled function), only co_version differs.
    fake_.SetCodeField32(code, l.code_version, 8);
    expect_new("co_version");
    // Once the counter has run out (0), the contents decide, as before 3.12.
    fake_.SetCodeField32(code, l.code_version, 0);
    expect_new("co_version 0");
  }
  // Without co_version: objects of other contents at the old ones' addresses.
  fake_.SetCodeField(code, l.code_filename, fake_.NewString(U"other.py"));
  expect_new("file name");
  fake_.SetCodeField(code, l.code_line_table, fake_.NewBytes({0xE8, 0x02}));
  expect_new("line table");
  const uint64_t table = PyLoad<uint64_t>(code, l.code_line_table);
  fake_.SetCodeField(table, l.bytes_data, 0x0102);
  expect_new("line table contents");
  const uint64_t name = PyLoad<uint64_t>(code, name_at);
  fake_.SetCodeField32(name, l.unicode_ascii_data, 'w' | 'e' << 8 | 'n' << 16);
  EXPECT_EQ(NameOf(expect_new("name contents")), "wen");
  // An interned name (its hash computed) at the old name's address, of another hash.
  fake_.SetStringHash(name, 0x1234);
  expect_new("name hash");
  fake_.SetStringHash(name, 0x4321);
  expect_new("another name hash");
  EXPECT_EQ(table_.size(), ids.size());
}

TEST_P(PyCodeCacheTest, ACacheUsedWithAnotherTableForgetsTheFirstTablesIds) {
  uint64_t a = fake_.NewCode({}), b = fake_.NewCode({});
  Look(a);
  Look(b);
  PyCodeTable other;
  PyFrameSample frame;
  frame.code = b;
  uint32_t id = 0;
  EXPECT_EQ(other.InternAll(fake_.view(), &frame, 1, &id, *cache_), 0);
  EXPECT_EQ(id, 1u);  // b is the first code object of the other table
  EXPECT_EQ(other.cache_misses(), 1u);
  EXPECT_EQ(Look(b), 2u);  // and back: the first table's id again
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, PyCodeCacheTest,
                         ::testing::ValuesIn(testing::kAllFakeVersions),
                         [](const auto& info) { return testing::FakeVersionName(info.param); });

TEST_P(PyCodeTableTest, NonAsciiStringsOfEveryWidthBecomeUtf8) {
  FakeCodeSpec spec;
  spec.name = spec.qualname = U"f\u00fcnf";                  // 1 byte per character
  spec.filename = U"/\u6a21\u578b/\U0001F600\U00020000.py";  // 4 bytes per character
  PyCodeInfo info = InternAndDrain(fake_.NewCode(spec));
  EXPECT_EQ(info.name, "f\xC3\xBCnf");
  EXPECT_EQ(info.filename, "/\xE6\xA8\xA1\xE5\x9E\x8B/\xF0\x9F\x98\x80\xF0\xA0\x80\x80.py");
  spec.name = spec.qualname = U"\u51fd\u6570";                         // 2 bytes per character
  spec.filename = std::u32string(U"bad") + char32_t(0xDC80) + U".py";  // a lone surrogate
  info = InternAndDrain(fake_.NewCode(spec));
  EXPECT_EQ(info.name, "\xE5\x87\xBD\xE6\x95\xB0");
  EXPECT_EQ(info.filename, "bad\xEF\xBF\xBD.py");
}

TEST_P(PyCodeTableTest, LongNamesAreCutAtACharacterBoundary) {
  FakeCodeSpec spec;
  spec.name = spec.qualname = std::u32string(300, U'\u00e9');  // 600 bytes of UTF-8
  PyCodeInfo info = InternAndDrain(fake_.NewCode(spec));
  EXPECT_EQ(info.name.size(), size_t(kMaxPyNameBytes));
  EXPECT_EQ(info.name.substr(0, 2), "\xC3\xA9");
  EXPECT_EQ(info.name.substr(info.name.size() - 2), "\xC3\xA9");
}

TEST_P(PyCodeTableTest, AbsurdLengthsAndForeignObjectsAreNotRead) {
  FakeCodeSpec spec;
  spec.line_table = {0xE8, 0x02};
  uint64_t code = fake_.NewCode(spec);
  const PyLayout& l = fake_.view().layout;
  uint64_t name = PyLoad<uint64_t>(code, l.code_qualname >= 0 ? l.code_qualname : l.code_name);
  uint64_t filename = PyLoad<uint64_t>(code, l.code_filename);
  uint64_t table = PyLoad<uint64_t>(code, l.code_line_table);
  fake_.SetStringLength(name, uint64_t{1} << 40);
  fake_.SetStringState(filename, 0);  // not compact: a legacy string
  fake_.SetBytesLength(table, int64_t{1} << 40);
  PyCodeInfo info = InternAndDrain(code);
  EXPECT_EQ(info.name, "");
  EXPECT_EQ(info.filename, "");
  EXPECT_EQ(info.line_format, PyLineTableFormat::kNone);
  EXPECT_EQ(info.line_table, "");
  EXPECT_EQ(table_.unreadable(), 1u);

  uint64_t other = fake_.NewCode(spec);
  fake_.SetCodeField(other, l.code_filename, fake_.NewBytes({'x'}));  // bytes, not str
  fake_.SetCodeField(other, l.code_line_table, 0);
  info = InternAndDrain(other);
  EXPECT_EQ(info.filename, "");
  EXPECT_EQ(info.line_format, PyLineTableFormat::kNone);
}

TEST_P(PyCodeTableTest, AFullTableCountsWhatItCannotAdd) {
  PyCodeTable small(PyCodeTableOptions{.max_codes = 2});
  EXPECT_EQ(small.Intern(fake_.view(), fake_.NewCode({})), 1u);
  EXPECT_EQ(small.Intern(fake_.view(), fake_.NewCode({})), 2u);
  EXPECT_EQ(small.Intern(fake_.view(), fake_.NewCode({})), 0u);
  EXPECT_EQ(small.failed(), 1u);
  PyCodeTable tiny_arena(PyCodeTableOptions{.max_codes = 8, .arena_bytes = 100});
  EXPECT_EQ(tiny_arena.Intern(fake_.view(), fake_.NewCode({})), 0u);
  EXPECT_EQ(tiny_arena.failed(), 1u);
}

TEST_P(PyCodeTableTest, ThreadsInterningTogetherAgreeOnIds) {
  std::vector<uint64_t> codes;
  for (int i = 0; i < 64; ++i) codes.push_back(fake_.NewCode({}));
  std::vector<std::vector<uint32_t>> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (uint64_t code : codes) ids[t].push_back(table_.Intern(fake_.view(), code));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(table_.size(), 64u);
  // An insert may give up on a busy lock (0, counted) and succeed on a later look; every
  // id handed out for a code object is the one it keeps.
  uint64_t zeros = 0;
  for (int t = 0; t < 4; ++t) {
    for (size_t i = 0; i < ids[t].size(); ++i) {
      uint32_t want = table_.Intern(fake_.view(), codes[i % codes.size()]);
      ASSERT_NE(want, 0u);
      if (ids[t][i] == 0)
        ++zeros;
      else
        ASSERT_EQ(ids[t][i], want) << "thread " << t << " look " << i;
    }
  }
  EXPECT_EQ(table_.failed(), zeros);
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, PyCodeTableTest,
                         ::testing::ValuesIn(testing::kAllFakeVersions),
                         [](const auto& info) { return testing::FakeVersionName(info.param); });

}  // namespace
}  // namespace gpuperf::inject
