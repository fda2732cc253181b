// The strict .npy reader/writer of the CLI (tools/smla/npy.hpp): round trips, the three
// format versions, and one test per way a file can be malformed, each of which must be an
// NpyError whose message names the file and the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.hpp"
#include "npy.hpp"

namespace smla::cli {
namespace {

// The bytes of a .npy file with the given version and header dict (padded and terminated
// like numpy does) followed by `data_bytes` zero bytes.
std::string npy_bytes(int major, const std::string& dict, size_t data_bytes) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\0');
}

std::string dict(const std::string& descr, const std::string& order, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
}

// Parsing must fail with a message that names the file and contains `problem`.
void expect_rejected(const std::string& contents, const std::string& problem) {
  try {
    parse_npy("bad.npy", contents);
    ADD_FAILURE() << "accepted a file that should fail with '" << problem << "'";
  } catch (const NpyError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.npy: ", 0), 0u) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  }
}

class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/smla_test_npy_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const char* name : {"a.npy", "b.npy"}) std::remove((dir_ + "/" + name).c_str());
    rmdir(dir_.c_str());
  }
  std::string path(const char* name) const { return dir_ + "/" + name; }
  bool exists(const std::string& p) const { return std::ifstream(p).good(); }

  std::string dir_;
};

TEST(Npy, RoundTripsEachDtypeAndShape) {
  NpyArray f32 = NpyArray::zeros(NpyDType::f32, {3, 4});
  for (int i = 0; i < 12; ++i) f32.data<float>()[i] = 0.5f * i - 1.0f;
  NpyArray i32 = NpyArray::zeros(NpyDType::i32, {5});
  i32.data<int32_t>()[4] = -7;
  NpyArray u8 = NpyArray::zeros(NpyDType::u8, {2, 0, 3});
  NpyArray scalar = NpyArray::zeros(NpyDType::f32, {});
  for (const NpyArray* array : {&f32, &i32, &u8, &scalar}) {
    const std::string bytes = serialize_npy(*array);
    EXPECT_EQ(bytes.size() - array->bytes.size(), 128u)
        << "header padded to 64 bytes, as numpy does";
    const NpyArray back = parse_npy("x.npy", bytes);
    EXPECT_EQ(back.dtype, array->dtype);
    EXPECT_EQ(back.shape, array->shape);
    EXPECT_EQ(back.bytes, array->bytes);
  }
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(i32.shape_string(), "(5,)");
}

TEST(Npy, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    const NpyArray a = parse_npy("v.npy", npy_bytes(major, dict("<i4", "False", "(2, 3)"), 24));
    EXPECT_EQ(a.dtype, NpyDType::i32);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  }
}

TEST(Npy, AcceptsKeysInAnyOrderAndDoubleQuotes) {
  const NpyArray a = parse_npy(
      "k.npy", npy_bytes(1, "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"|u1\"}", 4));
  EXPECT_EQ(a.dtype, NpyDType::u8);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{4}));
}

TEST(Npy, RejectsMissingMagic) { expect_rejected("PK\x03\x04 not numpy at all", "magic"); }

TEST(Npy, RejectsUnknownVersions) {
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(1,)"), 4).replace(6, 1, "\x04"),
                  "version 4.0");
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(1,)"), 4).replace(7, 1, "\x01"),
                  "version 1.1");
}

TEST(Npy, RejectsTruncatedHeader) {
  const std::string full = npy_bytes(1, dict("<f4", "False", "(1,)"), 4);
  expect_rejected(full.substr(0, 9), "truncated");
  expect_rejected(full.substr(0, 40), "truncated .npy header");
}

TEST(Npy, RejectsHeaderWithoutNewline) {
  std::string bytes = npy_bytes(1, dict("<f4", "False", "(1,)"), 4);
  bytes[bytes.size() - 5] = ' ';
  expect_rejected(bytes, "newline");
}

TEST(Npy, RejectsUnsupportedDtypes) {
  for (const char* descr : {"<f8", ">f4", "<f2", "<i8", "|b1", "<u4"}) {
    expect_rejected(npy_bytes(1, dict(descr, "False", "(1,)"), 8),
                    std::string("unsupported dtype '") + descr);
  }
}

TEST(Npy, RejectsFortranOrder) {
  expect_rejected(npy_bytes(1, dict("<f4", "True", "(2, 2)"), 16), "fortran_order is True");
}

TEST(Npy, RejectsMalformedDicts) {
  expect_rejected(npy_bytes(1, "{'descr': '<f4', 'shape': (1,), }", 4), "needs the keys");
  expect_rejected(
      npy_bytes(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4),
      "given twice");
  expect_rejected(
      npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4),
      "unexpected key 'x'");
  expect_rejected(npy_bytes(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4),
                  "True or False");
  expect_rejected(npy_bytes(1, "['descr', '<f4']", 4), "open the header dict");
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(1,)") + " junk", 4), "after the header dict");
}

TEST(Npy, RejectsMalformedShapes) {
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(-1,)"), 4), "non-negative integers");
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(2.5,)"), 4), "close the shape tuple");
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(3)"), 12), "trailing comma");
  expect_rejected(npy_bytes(1, dict("<f4", "False", "[3]"), 12), "open the shape tuple");
}

TEST(Npy, RejectsDataShorterOrLongerThanTheShape) {
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(2, 3)"), 20),
                  "truncated: shape (2, 3) of <f4 needs 24");
  expect_rejected(npy_bytes(1, dict("<f4", "False", "(2, 3)"), 28), "too long");
  expect_rejected(npy_bytes(1, dict("|u1", "False", "(5,)"), 0),
                  "needs 5 data bytes, the file has 0");
}

// Random damage to valid files of each dtype and version: bytes overwritten (by any byte or
// by one that means something in a header), inserted, cut out, or the file cut short, mostly
// within the header. The reader must reject each damaged file with an NpyError naming it, or
// read an array whose bytes are exactly what its dtype and shape need: never another
// exception, and never an array at odds with its own header. Under tools/sanitize-cpu this
// also checks that no damage makes the reader touch memory outside the file's bytes.
TEST(Npy, DamagedFilesAreRejectedOrReadConsistently) {
  std::vector<std::string> valid;
  for (int major : {1, 2}) {
    valid.push_back(npy_bytes(major, dict("<f4", "False", "(3, 4)"), 48));
    valid.push_back(npy_bytes(major, dict("<i4", "False", "(2, 1, 5)"), 40));
    valid.push_back(npy_bytes(major, dict("|u1", "False", "(7,)"), 7));
  }
  static constexpr const char* kHeaderTokens[] = {"9", "99999999999999999999", ",", " ", "(",
                                                  ")", "'", "-1", "\n", "{", "}", ":", "<f8"};
  test::Rng rng(20261205);
  int accepted = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string bytes = valid[rng.uniform_int(0, static_cast<int64_t>(valid.size()) - 1)];
    const int64_t header_end = std::min<int64_t>(static_cast<int64_t>(bytes.size()), 140);
    for (int64_t edits = rng.uniform_int(1, 3); edits > 0 && bytes.size() > 1; --edits) {
      const int64_t size = static_cast<int64_t>(bytes.size());
      const int64_t end = rng.uniform() < 0.8 ? std::min(header_end, size) : size;
      const auto at = static_cast<size_t>(rng.uniform_int(0, end - 1));
      switch (rng.uniform_int(0, 4)) {
        case 0: bytes[at] = static_cast<char>(rng.uniform_int(0, 255)); break;
        case 1: bytes.insert(at, rng.pick(kHeaderTokens)); break;
        case 2: bytes.erase(at, static_cast<size_t>(rng.uniform_int(1, 8))); break;
        case 3: bytes[at] = rng.pick(std::string_view("0123456789(),:'{} <>|fiuTF-")); break;
        default: bytes.resize(at); break;
      }
    }
    try {
      const NpyArray a = parse_npy("damaged.npy", bytes);
      ++accepted;
      EXPECT_EQ(static_cast<int64_t>(a.bytes.size()), a.numel() * npy_itemsize(a.dtype))
          << "trial " << trial << ": " << a.shape_string();
    } catch (const NpyError& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("damaged.npy: "))
          << "trial " << trial << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": not an NpyError: " << e.what();
    }
  }
  // Edits of the data or of the header's padding leave a valid file: some must get through,
  // or the test no longer exercises the accepting side.
  EXPECT_GT(accepted, 0);
}

TEST_F(NpyFiles, WriteThenReadAFile) {
  NpyArray a = NpyArray::zeros(NpyDType::i32, {2, 2});
  a.data<int32_t>()[3] = 42;
  write_npy(path("a.npy"), a);
  const NpyArray back = read_npy(path("a.npy"));
  EXPECT_EQ(back.bytes, a.bytes);
  EXPECT_FALSE(exists(path("a.npy") + ".tmp-smla-" + std::to_string(getpid())));
}

TEST_F(NpyFiles, MissingFileIsAnErrorNamingIt) {
  try {
    read_npy(path("missing.npy"));
    ADD_FAILURE() << "read a file that does not exist";
  } catch (const NpyError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.npy: cannot open"), std::string::npos)
        << e.what();
  }
}

TEST_F(NpyFiles, UncommittedBatchLeavesNoFile) {
  {
    NpyWriteBatch batch;
    batch.stage(path("a.npy"), NpyArray::zeros(NpyDType::f32, {1}));
    batch.stage(path("b.npy"), NpyArray::zeros(NpyDType::f32, {1}));
  }  // an error between stage and commit destroys the batch like this
  EXPECT_FALSE(exists(path("a.npy")));
  EXPECT_FALSE(exists(path("b.npy")));
  EXPECT_FALSE(exists(path("a.npy") + ".tmp-smla-" + std::to_string(getpid())));
}

TEST_F(NpyFiles, CommittedBatchWritesEveryFile) {
  NpyWriteBatch batch;
  batch.stage(path("a.npy"), NpyArray::zeros(NpyDType::f32, {1}));
  batch.stage(path("b.npy"), NpyArray::zeros(NpyDType::u8, {3}));
  batch.commit();
  EXPECT_EQ(read_npy(path("a.npy")).shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(read_npy(path("b.npy")).shape, (std::vector<int64_t>{3}));
}

TEST_F(NpyFiles, AFailedCommitPutsEveryTargetBack) {
  write_npy(path("a.npy"), NpyArray::zeros(NpyDType::u8, {7}));  // the caller's old file
  {
    NpyWriteBatch batch;
    batch.stage(path("a.npy"), NpyArray::zeros(NpyDType::f32, {1}));
    batch.stage(path("b.npy"), NpyArray::zeros(NpyDType::f32, {1}));
    ASSERT_EQ(mkdir(path("b.npy").c_str(), 0700), 0);  // appears between stage and commit
    EXPECT_THROW(batch.commit(), NpyError);
    EXPECT_EQ(read_npy(path("a.npy")).shape, (std::vector<int64_t>{7}));  // a.npy came back
  }  // the command's error path destroys the batch like this
  const std::string pid = std::to_string(getpid());
  for (const char* name : {"a.npy", "b.npy"}) {
    EXPECT_FALSE(exists(path(name) + ".tmp-smla-" + pid)) << name;
    EXPECT_FALSE(exists(path(name) + ".old-smla-" + pid)) << name;
  }
}

TEST_F(NpyFiles, AFailedRenameRestoresTheFilesAlreadyReplaced) {
  write_npy(path("a.npy"), NpyArray::zeros(NpyDType::u8, {7}));  // the caller's old file
  write_npy(path("d.npy"), NpyArray::zeros(NpyDType::u8, {5}));
  ASSERT_EQ(symlink(path("d.npy").c_str(), path("b.npy").c_str()), 0);  // a target that links
  const std::string pid = std::to_string(getpid());
  {
    NpyWriteBatch batch;
    batch.stage(path("b.npy"), NpyArray::zeros(NpyDType::f32, {2}));
    batch.stage(path("a.npy"), NpyArray::zeros(NpyDType::f32, {1}));
    batch.stage(path("c.npy"), NpyArray::zeros(NpyDType::f32, {1}));
    // c's new contents vanish: its rename fails after b.npy and a.npy were replaced.
    ASSERT_EQ(std::remove((path("c.npy") + ".tmp-smla-" + pid).c_str()), 0);
    EXPECT_THROW(batch.commit(), NpyError);
  }
  EXPECT_EQ(read_npy(path("a.npy")).shape, (std::vector<int64_t>{7}));
  struct stat link_stat {};
  ASSERT_EQ(lstat(path("b.npy").c_str(), &link_stat), 0);
  EXPECT_TRUE(S_ISLNK(link_stat.st_mode)) << "the link was replaced by a file";
  EXPECT_EQ(read_npy(path("b.npy")).shape, (std::vector<int64_t>{5}));
  EXPECT_FALSE(exists(path("c.npy")));
  for (const char* name : {"a.npy", "b.npy", "c.npy"}) {
    EXPECT_FALSE(exists(path(name) + ".old-smla-" + pid)) << name;
    EXPECT_FALSE(exists(path(name) + ".tmp-smla-" + pid)) << name;
  }
  std::remove(path("d.npy").c_str());
}

TEST_F(NpyFiles, CommitReplacesExistingTargetsAndDropsTheirBackups) {
  write_npy(path("a.npy"), NpyArray::zeros(NpyDType::u8, {7}));
  NpyWriteBatch batch;
  batch.stage(path("a.npy"), NpyArray::zeros(NpyDType::f32, {1}));
  batch.commit();
  EXPECT_EQ(read_npy(path("a.npy")).shape, (std::vector<int64_t>{1}));
  EXPECT_FALSE(exists(path("a.npy") + ".old-smla-" + std::to_string(getpid())));
}

TEST_F(NpyFiles, StageRefusesOneFileTwiceAndDirectories) {
  NpyWriteBatch batch;
  batch.stage(path("a.npy"), NpyArray::zeros(NpyDType::f32, {1}));
  EXPECT_THROW(batch.stage(dir_ + "/./a.npy", NpyArray::zeros(NpyDType::u8, {3})), NpyError);
  ASSERT_EQ(mkdir(path("b.npy").c_str(), 0700), 0);
  EXPECT_THROW(batch.stage(path("b.npy"), NpyArray::zeros(NpyDType::u8, {3})), NpyError);
}

TEST_F(NpyFiles, WritingIntoAMissingDirectoryFails) {
  EXPECT_THROW(write_npy(dir_ + "/no/such/dir/a.npy", NpyArray::zeros(NpyDType::f32, {1})),
               NpyError);
}

}  // namespace
}  // namespace smla::cli
