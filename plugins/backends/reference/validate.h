// Descriptor checks shared by the op families. Each throws OpError with a message that names the
// tensor, what was expected and what was given. Statuses: wrong counts and attributes out of range
// are NNRT_ERR_INVALID_ARGUMENT, dtypes NNRT_ERR_DTYPE, dims NNRT_ERR_SHAPE, and an alg value this
// backend does not know NNRT_ERR_UNSUPPORTED.
#pragma once

#include <stdint.h>

#include <initializer_list>

#include "dtype.h"
#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

// Run by the table on every descriptor before the op's create_*: the kind is known, counts are
// within the ABI limits, and every tensor in use is well formed (struct_size, dtype, rank, dims >= 0,
// sizes that fit in int64, outputs that never repeat an element).
void validate_tensors(const nnrt_op_desc &desc);

int64_t element_count(const nnrt_tensor_desc &t);

// "inputs (dy, x)", counts as [min, max].
void expect_counts(const nnrt_op_desc &desc, int inputs_min, int inputs_max, const char *input_names,
                   int outputs_min, int outputs_max, const char *output_names);

std::string dtype_set_string(DtypeSet set);
void expect_dtype(const nnrt_tensor_desc &t, const char *name, DtypeSet allowed);
void expect_same_dtype(const nnrt_tensor_desc &t, const char *name, const nnrt_tensor_desc &ref,
                       const char *ref_name);
void expect_rank(const nnrt_tensor_desc &t, const char *name, int rank);
void expect_dims(const nnrt_tensor_desc &t, const char *name, std::initializer_list<int64_t> dims);
void expect_dims(const nnrt_tensor_desc &t, const char *name, const int64_t *dims, int ndim);
void expect_same_dims(const nnrt_tensor_desc &t, const char *name, const nnrt_tensor_desc &ref,
                      const char *ref_name);

// An attribute check: fails with NNRT_ERR_INVALID_ARGUMENT and the message when !ok.
void expect_attr(bool ok, const char *format, ...) __attribute__((format(printf, 2, 3)));

// attrs.fused of MATMUL and CONV2D: 0 or an nnrt_unary_alg (CLIP with alpha <= beta).
void expect_fused_activation(const nnrt_op_attrs &attrs);

}  // namespace nnrt::reference
