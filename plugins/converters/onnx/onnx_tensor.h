// ONNX tensors (onnx.TensorProto) as host data: read with every check the format allows (data size
// against the declared shape, external data confined to the model's folder) before anything of the
// declared size is allocated, and written back for export.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter_base.h"
#include "onnx.pb.h"

namespace nnrt::io::onnx_format {

// The largest tensor or activation nnrt accepts from an ONNX file, in elements: a declared shape
// beyond it is refused before anything is allocated.
inline constexpr int64_t kMaxElements = int64_t(1) << 34;

// One tensor's values on the host, little-endian, in the ONNX element type it was stored with.
struct HostTensor {
  std::string name;
  int32_t elem_type = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  std::string bytes;

  int64_t numel() const;
  // The values converted; throw NNRT_ERR_UNSUPPORTED for element types that do not convert
  // (strings, complex numbers).
  std::vector<float> floats() const;
  std::vector<int64_t> ints() const;
  Shape shape(const std::string &what) const;  // NNRT_ERR_UNSUPPORTED beyond NNRT_MAX_DIMS dims
};

// The size of one element of an ONNX element type, 0 for types nnrt does not read.
size_t element_size(int32_t elem_type);
const char *element_type_name(int32_t elem_type);

// Reads `t`, taking its raw data out of the message (so that the weights are held once). External
// data is read from `model_dir` (which must hold it: absolute paths and ".." are refused).
// `where` names the tensor in messages. Throws NNRT_ERR_CORRUPT for a size that disagrees with the
// shape, a negative or overflowing dim, or missing external data; NNRT_ERR_UNSUPPORTED for element
// types nnrt does not read; NNRT_ERR_IO when an external file cannot be read.
HostTensor read_tensor(onnx::TensorProto &t, const std::string &model_dir, const std::string &where);

// A FLOAT HostTensor holding `values`.
HostTensor float_values(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &values);

// A FLOAT (or INT64) TensorProto holding `values` with raw data.
void write_tensor(onnx::TensorProto &t, const std::string &name, const std::vector<int64_t> &dims,
                  const std::vector<float> &values);
void write_int64_tensor(onnx::TensorProto &t, const std::string &name, const std::vector<int64_t> &values);

}  // namespace nnrt::io::onnx_format
