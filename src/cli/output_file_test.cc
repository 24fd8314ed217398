#include "cli/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuperf_output_file_test." + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  // How many names the directory holds: a temporary file that stayed shows here.
  size_t Entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++n;
    return n;
  }

  fs::path dir_;
};

TEST_F(OutputFileTest, TargetChangesOnlyWhenFinishSucceeds) {
  const std::string path = Path("out.txt");
  Write(path, "old");
  {
    auto out = OutputFile::Open(path);
    ASSERT_TRUE(out.ok()) << out.status().message();
    (*out)->stream() << "new";
    EXPECT_EQ(Read(path), "old");  // nothing visible before Finish
    EXPECT_EQ(Entries(), 2u);      // the target and the temporary file
    ASSERT_TRUE((*out)->Finish().ok());
    EXPECT_EQ((*out)->bytes_written(), 3u);
  }
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(OutputFileTest, FailedWorkKeepsTheOldFileAndRemovesTheTemporary) {
  const std::string path = Path("out.txt");
  Write(path, "old");
  {
    auto out = OutputFile::Open(path);
    ASSERT_TRUE(out.ok());
    (*out)->stream() << "half";
    Status status = (*out)->Finish(Error(StatusCode::kCorrupt, "bad input"));
    EXPECT_EQ(status.message(), "bad input");
  }
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(OutputFileTest, DroppedWithoutFinishLeavesNothingNew) {
  {
    auto out = OutputFile::Open(Path("new.txt"));
    ASSERT_TRUE(out.ok());
    (*out)->stream() << "abandoned";
  }
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(OutputFileTest, LargeWritesArriveWhole) {
  const std::string path = Path("big.bin");
  std::string block(3 << 20, 'x');
  block[12345] = 'y';
  auto out = OutputFile::Open(path);
  ASSERT_TRUE(out.ok());
  (*out)->stream() << "head";
  (*out)->stream().write(block.data(), static_cast<std::streamsize>(block.size()));
  (*out)->stream() << "tail";
  ASSERT_TRUE((*out)->Finish().ok());
  EXPECT_EQ(Read(path), "head" + block + "tail");
}

TEST_F(OutputFileTest, WriteErrorsAreReportedWithTheirCause) {
  auto out = OutputFile::Open("/dev/full");
  ASSERT_TRUE(out.ok()) << out.status().message();
  (*out)->stream() << std::string(1 << 20, 'x');
  Status status = (*out)->Finish();
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_EQ(status.message(), "writing /dev/full: No space left on device");
}

TEST_F(OutputFileTest, RefusesDirectoriesFifosWithoutReadersAndTheInput) {
  auto directory = OutputFile::Open(dir_.string());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);

  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto unread = OutputFile::Open(fifo);
  EXPECT_EQ(unread.status().message(),
            "cannot write " + fifo + ": it is a FIFO that no process is reading");
  EXPECT_TRUE(fs::is_fifo(fifo));

  const std::string input = Path("in.gpt");
  Write(input, "trace");
  auto same = OutputFile::Open(input, input);
  EXPECT_EQ(same.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Read(input), "trace");
}

TEST_F(OutputFileTest, NewFilesFollowTheUmask) {
  const mode_t old_mask = umask(027);
  auto out = OutputFile::Open(Path("masked.txt"));
  umask(old_mask);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*out)->Finish().ok());
  struct stat st;
  ASSERT_EQ(stat(Path("masked.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

}  // namespace
}  // namespace gpuperf::cli
