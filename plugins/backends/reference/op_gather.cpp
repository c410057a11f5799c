// NNRT_OP_GATHER (y[..., :] = table[indices[...], :], any dtype) and NNRT_OP_SCATTER_ADD (its
// gradient: dtable[v, :] = the sum of the dy rows whose index is v, float dtypes), with indices
// I32 or I64 of any rank. Every index is checked before anything is written; one outside [0, V) is
// NNRT_ERR_INVALID_ARGUMENT naming it and its position.
//
// SCATTER_ADD splits the table's rows between threads; each thread scans all indices in order and
// adds the rows it owns, so every sum is in index order whatever the thread count. f16 and bf16
// accumulate in f32 in the workspace.
#include <string.h>

#include "nnrt/kernels/index_ops.h"
#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

// The index tensor, walked in row-major order alongside the rows of a [..., D] tensor `rows`
// (whose leading dims are the indices' dims).
class IndexWalk {
 public:
  IndexWalk(const nnrt_tensor_desc &indices, const nnrt_tensor_desc &rows) : indices_(indices) {
    const int64_t *strides[2] = {indices.strides, rows.strides};
    loop_ = make_strided_loop<2>(indices.ndim, indices.dims, strides);
  }

  int64_t count() const { return loop_.count; }

  // fn(position, index value, offset of the row in `rows`) for positions [begin, end).
  template <class F>
  void for_each(const void *indices, int64_t begin, int64_t end, F fn) const {
    visit_index(indices_.dtype, [&](auto type) {
      using I = typename decltype(type)::type;
      const I *idx = static_cast<const I *>(indices);
      int64_t position = begin;
      for_each_run(loop_, begin, end, [&](const int64_t *o, int64_t n) {
        for (int64_t i = 0; i < n; ++i, ++position)
          fn(position, static_cast<int64_t>(idx[o[0] + i * loop_.inner_stride(0)]), o[1] + i * loop_.inner_stride(1));
      });
    });
  }

  void check(const void *indices, int64_t rows) const {
    for_each(indices, 0, count(), [&](int64_t position, int64_t v, int64_t) {
      if (!kernels::index_in_rows(v, rows)) {
        int64_t at[NNRT_MAX_DIMS], rest = position;
        for (int d = indices_.ndim - 1; d >= 0; --d) {
          at[d] = rest % indices_.dims[d];
          rest /= indices_.dims[d];
        }
        fail(NNRT_ERR_INVALID_ARGUMENT, "indices%s = %lld is outside the table's rows [0, %lld)",
             dims_string(at, indices_.ndim).c_str(), static_cast<long long>(v), static_cast<long long>(rows));
      }
    });
  }

 private:
  nnrt_tensor_desc indices_;
  StridedLoop<2> loop_;
};

class GatherKernel final : public OpKernel {
 public:
  explicit GatherKernel(const OpSetup &setup)
      : exec_(setup.exec), table_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]),
        walk_(setup.desc.inputs[1], setup.desc.outputs[0]) {}

  void run(const nnrt_op_args &args) const override {
    walk_.check(args.inputs[1], table_.dims[0]);
    const int64_t width = table_.dims[1];
    if (width == 0) return;
    visit_all(table_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      const T *table = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      const int64_t st = table_.strides[1], sy = y_.strides[y_.ndim - 1];
      parallel_for(exec_, walk_.count(), kCheapGrain / width + 1, [&](int64_t begin, int64_t end) {
        walk_.for_each(args.inputs[1], begin, end, [&](int64_t, int64_t v, int64_t y_offset) {
          const T *from = table + v * table_.strides[0];
          T *to = y + y_offset;
          if (st == 1 && sy == 1) {
            memcpy(to, from, static_cast<size_t>(width) * sizeof(T));
          } else {
            for (int64_t d = 0; d < width; ++d) to[d * sy] = from[d * st];
          }
        });
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc table_, y_;
  IndexWalk walk_;
};

class ScatterAddKernel final : public OpKernel {
 public:
  explicit ScatterAddKernel(const OpSetup &setup)
      : exec_(setup.exec), dy_(setup.desc.inputs[0]), dtable_(setup.desc.outputs[0]),
        walk_(setup.desc.inputs[1], setup.desc.inputs[0]) {
    visit_float(dtable_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      if constexpr (is_half_v<T>) workspace_bytes_ = static_cast<size_t>(element_count(dtable_)) * sizeof(float);
    });
  }

  void run(const nnrt_op_args &args) const override {
    const int64_t rows = dtable_.dims[0], width = dtable_.dims[1];
    walk_.check(args.inputs[1], rows);
    if (rows == 0 || width == 0) return;
    visit_float(dtable_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *dy = input_ptr<T>(args, 0);
      T *dtable = output_ptr<T>(args, 0);
      const int64_t sdy = dy_.strides[dy_.ndim - 1];
      const int64_t grain = (walk_.count() * width) / rows > kCheapGrain ? 1 : 64;
      // Rows [v0, v1) of the sums: zeroed, then every dy row whose index falls there added in index
      // order. f32 and f64 accumulate in dtable itself; f16 and bf16 in a dense f32 copy
      // (the workspace), stored once at the end.
      parallel_for(exec_, rows, grain, [&](int64_t v0, int64_t v1) {
        auto accumulate = [&](auto row_at, int64_t stride) {
          for (int64_t v = v0; v < v1; ++v)
            for (int64_t d = 0; d < width; ++d) row_at(v)[d * stride] = C(0);
          walk_.for_each(args.inputs[1], 0, walk_.count(), [&](int64_t, int64_t v, int64_t dy_offset) {
            if (v < v0 || v >= v1) return;
            C *to = row_at(v);
            const T *from = dy + dy_offset;
            for (int64_t d = 0; d < width; ++d) to[d * stride] += load(from + d * sdy);
          });
        };
        if constexpr (is_half_v<T>) {
          C *acc = static_cast<C *>(args.workspace);
          accumulate([&](int64_t v) { return acc + v * width; }, 1);
          for (int64_t v = v0; v < v1; ++v)
            for (int64_t d = 0; d < width; ++d)
              store(dtable + v * dtable_.strides[0] + d * dtable_.strides[1], acc[v * width + d]);
        } else {
          accumulate([&](int64_t v) { return dtable + v * dtable_.strides[0]; }, dtable_.strides[1]);
        }
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc dy_, dtable_;
  IndexWalk walk_;
};

void expect_indices(const nnrt_tensor_desc &indices) {
  expect_dtype(indices, "input indices", kIndexDtypes);
  expect_attr(indices.ndim < NNRT_MAX_DIMS, "input indices has rank %d; at most %d so that the rows fit",
              indices.ndim, NNRT_MAX_DIMS - 1);
}

// rows [..., D] must have the indices' dims followed by D.
void expect_rows(const nnrt_tensor_desc &rows, const char *name, const nnrt_tensor_desc &indices, int64_t width) {
  int64_t expected[NNRT_MAX_DIMS];
  for (int d = 0; d < indices.ndim; ++d) expected[d] = indices.dims[d];
  expected[indices.ndim] = width;
  expect_dims(rows, name, expected, indices.ndim + 1);
}

}  // namespace

KernelPtr create_gather(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &table = d.inputs[0], &indices = d.inputs[1], &y = d.outputs[0];
  expect_rank(table, "input table ([V, D])", 2);
  expect_indices(indices);
  expect_same_dtype(y, "output y", table, "input table");
  expect_rows(y, "output y ([...indices dims, D])", indices, table.dims[1]);
  return std::make_unique<GatherKernel>(setup);
}

KernelPtr create_scatter_add(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &dy = d.inputs[0], &indices = d.inputs[1], &dtable = d.outputs[0];
  expect_rank(dtable, "output dtable ([V, D])", 2);
  expect_dtype(dtable, "output dtable", kFloatDtypes);
  expect_same_dtype(dy, "input dy", dtable, "output dtable");
  expect_indices(indices);
  expect_rows(dy, "input dy ([...indices dims, D])", indices, dtable.dims[1]);
  return std::make_unique<ScatterAddKernel>(setup);
}

}  // namespace nnrt::reference
