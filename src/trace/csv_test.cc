// CsvFile (src/trace/csv.h) on the inputs that broke it or its callers: a last line without
// a newline (found by fuzz/trace_fuzzer: RecordsLeft read past the end), a UTF-8 byte order
// mark, a directory or a missing file given as the path (errors with the reason, no throw).
#include "trace/csv.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace tiresias {
namespace {

std::string Write(const std::string& name, const std::string& content) {
  auto path = testing::ScratchDir("csv") / name;
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

TEST(CsvFile, LastLineWithoutNewline) {
  // The fuzz input's shape: a header and nothing else, no '\n' at the end.
  auto header_only = CsvFile::Open(Write("h.csv", "timestamp,duration,num_gpus"));
  ASSERT_TRUE(header_only.ok()) << header_only.status().message();
  EXPECT_EQ(header_only->header().size(), 3u);
  EXPECT_EQ(header_only->RecordsLeft(), 1u);  // an upper bound, and no read past the end
  std::vector<std::string_view> row;
  EXPECT_FALSE(header_only->Next(row));
  EXPECT_EQ(header_only->RecordsLeft(), 1u);

  auto f = CsvFile::Open(Write("r.csv", "a,b\n1,2\n3,4"));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->Next(row));
  ASSERT_TRUE(f->Next(row));
  EXPECT_EQ(row[1], "4");
  EXPECT_EQ(f->where(), f->path() + ":3");
  EXPECT_FALSE(f->Next(row));
  EXPECT_EQ(f->RecordsLeft(), 1u);
}

TEST(CsvFile, SkipsAUtf8ByteOrderMark) {
  auto f = CsvFile::Open(Write("bom.csv", "\xEF\xBB\xBFjob_id,num_gpu\r\n0,1\r\n"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->Column("job_id"), 0u);
  std::vector<std::string_view> row;
  ASSERT_TRUE(f->Next(row));
  EXPECT_EQ(f->where(), f->path() + ":2");
  // Only at the very start: elsewhere the bytes are data.
  auto g = CsvFile::Open(Write("mid.csv",
                               "a\n\xEF\xBB\xBF"
                               "b\n"));
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(g->Next(row));
  EXPECT_EQ(row[0],
            "\xEF\xBB\xBF"
            "b");
}

TEST(CsvFile, ADirectoryIsAnErrorNotAThrow) {
  const auto dir = testing::ScratchDir("csv_dir");
  auto f = CsvFile::Open(dir.string());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), dir.string() + ": is a directory, expected a CSV file");
}

TEST(CsvFile, AColumnNamedTwiceIsAnError) {
  const auto dir = testing::ScratchDir("csv_twice");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,num_gpu,submit_time,duration\n0,1,2,0,10\n";
  auto f = CsvFile::Open((dir / "t.csv").string());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            (dir / "t.csv").string() + ":1: column 'num_gpu' appears twice in the header");
}

TEST(CsvFile, CannotOpenSaysWhy) {
  auto f = CsvFile::Open("/nonexistent/x.csv");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kIoError);
  EXPECT_EQ(f.status().message(), "/nonexistent/x.csv: cannot open: No such file or directory");
}

}  // namespace
}  // namespace tiresias
