#include "npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace smla::cli {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// numpy aligns the start of the data to 64 bytes so that it can be memory-mapped.
constexpr size_t kHeaderAlign = 64;
// No real array needs more: the bound keeps numel * itemsize far from int64 overflow.
constexpr int64_t kMaxBytes = int64_t{1} << 48;

[[noreturn]] void fail(const std::string& name, const std::string& problem) {
  throw NpyError(name + ": " + problem);
}

// A cursor over the header dict. Only the subset of Python literal syntax that numpy writes
// is accepted: quoted strings, True/False, and tuples of non-negative integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& name, const std::string& text) : name_(name), text_(text) {}

  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool accept(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* where) {
    if (!accept(c)) bad(std::string("expected '") + c + "' " + where);
  }
  std::string string_literal() {
    skip_spaces();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      bad("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string::npos) bad("unterminated string");
    std::string value = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return value;
  }
  bool boolean_literal() {
    skip_spaces();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::string w = word;
      if (text_.compare(pos_, w.size(), w) == 0) {
        pos_ += w.size();
        return value;
      }
    }
    bad("expected True or False");
  }
  std::vector<int64_t> shape_tuple() {
    expect('(', "to open the shape tuple");
    std::vector<int64_t> shape;
    bool trailing_comma = false;
    while (!accept(')')) {
      skip_spaces();
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        bad("shape must be a tuple of non-negative integers");
      }
      int64_t dim = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        dim = dim * 10 + (text_[pos_++] - '0');
        if (dim > kMaxBytes) bad("shape dimension too large");
      }
      shape.push_back(dim);
      trailing_comma = accept(',');
      if (!trailing_comma) {
        expect(')', "to close the shape tuple");
        break;
      }
    }
    // "(5)" is the integer 5 in Python, not a tuple: numpy itself would refuse it.
    if (shape.size() == 1 && !trailing_comma) bad("a 1-d shape needs a trailing comma: (n,)");
    return shape;
  }
  bool at_end() {
    skip_spaces();
    return pos_ == text_.size();
  }
  [[noreturn]] void bad(const std::string& problem) const {
    fail(name_, "malformed .npy header (" + problem + " at offset " + std::to_string(pos_) +
                    " of \"" + text_ + "\")");
  }

 private:
  const std::string& name_;
  const std::string& text_;
  size_t pos_ = 0;
};

bool parse_descr(const std::string& descr, NpyDType* dtype) {
  for (NpyDType candidate : {NpyDType::f32, NpyDType::i32, NpyDType::u8}) {
    if (descr == npy_descr(candidate)) {
      *dtype = candidate;
      return true;
    }
  }
  return false;
}

uint64_t read_le(const std::string& bytes, size_t offset, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  }
  return value;
}

}  // namespace

const char* npy_descr(NpyDType dtype) {
  switch (dtype) {
    case NpyDType::f32:
      return "<f4";
    case NpyDType::i32:
      return "<i4";
    case NpyDType::u8:
      return "|u1";
  }
  return "?";
}

int npy_itemsize(NpyDType dtype) { return dtype == NpyDType::u8 ? 1 : 4; }

NpyArray NpyArray::zeros(NpyDType dtype, std::vector<int64_t> shape) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.bytes.assign(static_cast<size_t>(array.numel() * npy_itemsize(dtype)), 0);
  return array;
}

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string NpyArray::shape_string() const {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

NpyArray parse_npy(const std::string& name, const std::string& contents) {
  if (contents.size() < kMagicBytes + 2 || contents.compare(0, kMagicBytes, kMagic) != 0) {
    fail(name, "not a .npy file (missing the \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(contents[6]);
  const int minor = static_cast<unsigned char>(contents[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail(name, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }
  const int length_bytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagicBytes + 2 + length_bytes;
  if (contents.size() < preamble) fail(name, "truncated .npy header");
  const uint64_t header_len = read_le(contents, kMagicBytes + 2, length_bytes);
  if (contents.size() - preamble < header_len) {
    fail(name, "truncated .npy header (declares " + std::to_string(header_len) +
                   " header bytes, file has " + std::to_string(contents.size() - preamble) + ")");
  }
  std::string header = contents.substr(preamble, header_len);
  if (header.empty() || header.back() != '\n') {
    fail(name, "malformed .npy header (does not end with a newline)");
  }
  header.pop_back();
  if (major < 3) {
    for (const char c : header) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        fail(name, "malformed .npy header (non-ASCII byte in a version 1.0/2.0 header)");
      }
    }
  }

  HeaderParser parser(name, header);
  NpyArray array;
  bool have_descr = false, have_order = false, have_shape = false;
  parser.expect('{', "to open the header dict");
  while (!parser.accept('}')) {
    const std::string key = parser.string_literal();
    parser.expect(':', "after a key");
    bool* seen = nullptr;
    if (key == "descr") {
      const std::string descr = parser.string_literal();
      if (!parse_descr(descr, &array.dtype)) {
        fail(name, "unsupported dtype '" + descr + "' (expected '<f4', '<i4' or '|u1')");
      }
      seen = &have_descr;
    } else if (key == "fortran_order") {
      if (parser.boolean_literal()) {
        fail(name,
             "fortran_order is True (only C-ordered arrays are accepted; save with "
             "numpy.ascontiguousarray)");
      }
      seen = &have_order;
    } else if (key == "shape") {
      array.shape = parser.shape_tuple();
      seen = &have_shape;
    } else {
      parser.bad("unexpected key '" + key + "'");
    }
    if (*seen) parser.bad("key '" + key + "' given twice");
    *seen = true;
    if (!parser.accept(',')) {
      parser.expect('}', "to close the header dict");
      break;
    }
  }
  if (!parser.at_end()) parser.bad("unexpected text after the header dict");
  if (!have_descr || !have_order || !have_shape) {
    fail(name, "malformed .npy header (needs the keys 'descr', 'fortran_order' and 'shape')");
  }

  int64_t expected = npy_itemsize(array.dtype);
  for (int64_t d : array.shape) {
    if (d != 0 && expected > kMaxBytes / d) {
      fail(name, "shape " + array.shape_string() + " is too large");
    }
    expected *= d;
  }
  const size_t data_bytes = contents.size() - preamble - header_len;
  if (static_cast<int64_t>(data_bytes) != expected) {
    fail(name, std::string(data_bytes < static_cast<size_t>(expected) ? "truncated" : "too long") +
                   ": shape " + array.shape_string() + " of " + npy_descr(array.dtype) + " needs " +
                   std::to_string(expected) + " data bytes, the file has " +
                   std::to_string(data_bytes));
  }
  array.bytes.assign(contents.begin() + static_cast<std::ptrdiff_t>(preamble + header_len),
                     contents.end());
  return array;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, "cannot open for reading");
  std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) fail(path, "read error");
  return parse_npy(path, contents);
}

std::string serialize_npy(const NpyArray& array) {
  std::string dict = std::string("{'descr': '") + npy_descr(array.dtype) +
                     "', 'fortran_order': False, 'shape': " + array.shape_string() + ", }";
  // Version 1.0 stores the header length in 16 bits; 2.0 exists for longer headers.
  const bool v1 = dict.size() + 1 + 10 + kHeaderAlign <= std::numeric_limits<uint16_t>::max();
  const size_t preamble = v1 ? 10 : 12;
  size_t header_len = dict.size() + 1;  // + '\n'
  header_len += (kHeaderAlign - (preamble + header_len) % kHeaderAlign) % kHeaderAlign;
  std::string out(kMagic, kMagicBytes);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  for (int i = 0; i < (v1 ? 2 : 4); ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out += '\n';
  out.append(reinterpret_cast<const char*>(array.bytes.data()), array.bytes.size());
  return out;
}

NpyWriteBatch::~NpyWriteBatch() {
  for (const Staged& file : staged_) std::remove(file.temporary.c_str());
}

std::string same_file_key(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return path;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal().string() : canonical.string();
}

void NpyWriteBatch::stage(const std::string& path, const NpyArray& array) {
  const std::string key = same_file_key(path);
  for (const Staged& file : staged_) {
    if (file.key == key) fail(path, "names the same file as " + file.target + " in one batch");
  }
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) fail(path, "is a directory");
  // Next to the target, so the final rename stays on one file system and is atomic.
  const std::string pid = std::to_string(getpid());
  staged_.push_back({path + ".tmp-smla-" + pid, path, path + ".old-smla-" + pid, key});
  std::ofstream file(staged_.back().temporary, std::ios::binary | std::ios::trunc);
  if (!file) fail(path, "cannot open for writing");
  const std::string bytes = serialize_npy(array);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) fail(path, "write error");
}

void NpyWriteBatch::commit() {
  // Each rename replaces its target atomically, so a target is never missing. With more
  // than one file, an existing target first gets a hard link as its backup (a symlink is
  // linked as the link it is), so that a failed later rename can put it back: either every
  // new file is in place or every target is as it was. Without hard links on the file
  // system, a target is replaced without a backup.
  const bool restorable = staged_.size() > 1;
  std::vector<bool> backed_up(staged_.size(), false);
  size_t placed = 0;
  auto roll_back = [&] {
    for (size_t i = 0; i < staged_.size(); ++i) {
      const Staged& file = staged_[i];
      if (i < placed) {  // the new file is in place: the old one back, or none
        if (backed_up[i]) {
          std::rename(file.backup.c_str(), file.target.c_str());
        } else {
          std::remove(file.target.c_str());
        }
      } else if (backed_up[i]) {  // the target is untouched: only the link goes
        std::remove(file.backup.c_str());
      }
    }
  };
  for (size_t i = 0; i < staged_.size(); ++i) {
    const Staged& file = staged_[i];
    std::error_code error;
    if (std::filesystem::is_directory(file.target, error)) {  // appeared since stage()
      roll_back();
      fail(file.target, "is a directory");
    }
    const auto link_status = std::filesystem::symlink_status(file.target, error);
    if (restorable && std::filesystem::exists(link_status)) {
      backed_up[i] = linkat(AT_FDCWD, file.target.c_str(), AT_FDCWD, file.backup.c_str(), 0) == 0;
    }
  }
  for (; placed < staged_.size(); ++placed) {
    const Staged& file = staged_[placed];
    if (std::rename(file.temporary.c_str(), file.target.c_str()) != 0) {
      roll_back();
      fail(file.target, "cannot rename into place");
    }
  }
  for (size_t i = 0; i < staged_.size(); ++i) {
    if (backed_up[i]) std::remove(staged_[i].backup.c_str());
  }
  staged_.clear();
}

void write_npy(const std::string& path, const NpyArray& array) {
  NpyWriteBatch batch;
  batch.stage(path, array);
  batch.commit();
}

}  // namespace smla::cli
