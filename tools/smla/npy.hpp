// A strict reader and writer of NumPy .npy files, the exchange format of `smla run`,
// `quantize` and `dequantize`. Strict because a silently misread file (a big-endian or
// Fortran-ordered array, a truncated download) would turn into a wrong attention result
// rather than an error: anything but a C-ordered little-endian f32 / i32 / u8 array whose
// data is exactly as long as its shape says is rejected with a message naming the file.
//
// Format (numpy.lib.format): magic "\x93NUMPY", version byte pair (1,0) | (2,0) | (3,0),
// header length (u16 LE for 1.0, u32 LE for 2.0/3.0), a Python dict literal
// {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces and ending in
// '\n', then the raw C-order data.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace smla::cli {

enum class NpyDType { f32, i32, u8 };  // '<f4', '<i4', '|u1'

const char* npy_descr(NpyDType dtype);
int npy_itemsize(NpyDType dtype);

// An array in host memory: `bytes` holds numel * itemsize bytes, C order, little-endian.
struct NpyArray {
  NpyDType dtype = NpyDType::f32;
  std::vector<int64_t> shape;  // () is a scalar of one element
  std::vector<unsigned char> bytes;

  static NpyArray zeros(NpyDType dtype, std::vector<int64_t> shape);
  int64_t numel() const;
  std::string shape_string() const;  // "(3, 4)"
  template <class T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// Every problem with a file: the message starts with the file's path.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

NpyArray read_npy(const std::string& path);
// Parses the contents of a file; `name` is only used in error messages.
NpyArray parse_npy(const std::string& name, const std::string& contents);
std::string serialize_npy(const NpyArray& array);  // format 1.0, or 2.0 for huge headers

// The same string for two paths that name one file: absolute, with "." / ".." and the links
// that exist resolved.
std::string same_file_key(const std::string& path);

// Writes several files so that either all of them appear or none does: each is written to
// a temporary name next to its target, and only commit() renames them into place (each
// rename atomic), after giving the targets that exist a hard-linked backup; when a rename
// fails, the new files go and the old ones come back. Files staged but not committed (an
// error happened in between) are removed on destruction. Two paths naming one file (after
// resolving "." and links) and a path naming a directory are refused.
class NpyWriteBatch {
 public:
  NpyWriteBatch() = default;
  NpyWriteBatch(const NpyWriteBatch&) = delete;
  NpyWriteBatch& operator=(const NpyWriteBatch&) = delete;
  ~NpyWriteBatch();

  void stage(const std::string& path, const NpyArray& array);
  void commit();

 private:
  struct Staged {
    std::string temporary;  // the new contents, until commit()
    std::string target;
    std::string backup;  // where commit() keeps an existing target until every rename is done
    std::string key;     // the target's canonical path: one file, one entry
  };
  std::vector<Staged> staged_;
};

// One file, atomically (a batch of one).
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace smla::cli
