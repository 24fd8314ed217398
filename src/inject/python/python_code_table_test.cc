#include "inject/python/python_code_table.h"

#include <gtest/gtest.h>

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
};

TEST_P(PyCodeTableTest, CopiesNamesFirstLineAndLineTable) {
  FakeCodeSpec spec;
  spec.name = U"forward";
  spec.qualname = U"Block.forward";
  spec.filename = U"/src/model.py";
  spec.first_line = 80;
  spec.line_table = {0xE8, 0x0E, 0x82, 0x05};  // 3.11 format: +7, then 3 more units there
  spec.code_units = 40;
  PyCodeInfo info = InternAndDrain(fake_.NewCode(spec));
  EXPECT_EQ(info.name, HasQualname() ? "Block.forward" : "forward");
  EXPECT_EQ(info.filename, "/src/model.py");
  EXPECT_EQ(info.first_line, 80);
  EXPECT_EQ(info.code_units, 40u);
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
  EXPECT_EQ(table_.InternAll(fake_.view(), frames, 4, ids), 1);
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
