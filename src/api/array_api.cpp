// nnrt_array_*: create, copy in and out, inspect, release.
#include "api/handles.h"
#include "backend/ops.h"
#include "core/checked_math.h"
#include "core/dtype.h"

using namespace nnrt;
using namespace nnrt::api;

namespace {

Shape checked_shape(nnrt_dtype dtype, int32_t ndim, const int64_t *shape) {
  check_shape(ndim, shape, "shape");
  check_dtype_valid(dtype, "dtype");
  return Shape::of(shape, ndim);
}

nnrt_array *wrap(Array a) {
  auto h = std::make_unique<nnrt_array>();
  h->impl = std::move(a);
  return h.release();
}

}  // namespace

extern "C" {

nnrt_status nnrt_array_create(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim, const int64_t *shape,
                              nnrt_array **out) {
  return guard("nnrt_array_create", [&] {
    check_handle(ctx, "ctx");
    require(out != nullptr, "out is NULL; expected a pointer to receive the array");
    Shape s = checked_shape(dtype, ndim, shape);
    *out = wrap(ops::zeros(*ctx->impl, dtype, s));
  });
}

nnrt_status nnrt_array_from_host(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim, const int64_t *shape,
                                 const void *data, size_t nbytes, nnrt_array **out) {
  return guard("nnrt_array_from_host", [&] {
    check_handle(ctx, "ctx");
    require(out != nullptr, "out is NULL; expected a pointer to receive the array");
    Shape s = checked_shape(dtype, ndim, shape);
    size_t expected = static_cast<size_t>(s.numel()) * dtype_size(dtype);
    if (nbytes != expected) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "nbytes is ", nbytes, " but ", dtype_name(dtype), to_string(s), " needs ",
           expected, " bytes");
    }
    require(data != nullptr || nbytes == 0, "data is NULL; expected the array's elements");
    if (dtype == NNRT_DTYPE_BOOL) {
      const unsigned char *p = static_cast<const unsigned char *>(data);
      for (size_t i = 0; i < nbytes; ++i) {
        if (p[i] > 1) fail(NNRT_ERR_INVALID_ARGUMENT, "bool element ", i, " is ", int(p[i]), "; expected 0 or 1");
      }
    }
    *out = wrap(ops::from_host(*ctx->impl, dtype, s, data, nbytes));
  });
}

nnrt_status nnrt_array_wrap_host(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim, const int64_t *shape,
                                 const int64_t *strides, void *data, size_t nbytes, nnrt_release_fn release,
                                 void *user, nnrt_array **out) {
  return guard("nnrt_array_wrap_host", [&] {
    check_handle(ctx, "ctx");
    require(out != nullptr, "out is NULL; expected a pointer to receive the array");
    Shape s = checked_shape(dtype, ndim, shape);
    if (dtype == NNRT_DTYPE_BOOL) {
      fail(NNRT_ERR_DTYPE, "bool arrays cannot wrap memory (their elements must stay 0 or 1, which nnrt checks ",
           "once, as it copies): use nnrt_array_from_host");
    }
    const std::shared_ptr<backend::Device> &device = ctx->impl->device();
    if (!device->host_memory()) {
      fail(NNRT_ERR_UNSUPPORTED, "the context's backend '", device->name(),
           "' keeps arrays in device memory, so it cannot use host memory in place: use nnrt_array_from_host");
    }
    Strides st = contiguous_strides(s);
    if (strides) {
      for (int32_t i = 0; i < ndim; ++i) {
        if (strides[i] < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "strides[", i, "] is ", strides[i], "; expected >= 0");
        st[i] = strides[i];
      }
    }
    size_t elem = dtype_size(dtype);
    // The bytes up to the end of the last element (none for an empty array).
    size_t needed = 0;
    if (s.numel() > 0) {
      int64_t last = 0;
      for (int32_t i = 0; i < ndim; ++i) {
        last = checked_add(last, checked_mul(s.dims[i] - 1, st[i], "strides"), "strides");
      }
      needed = checked_bytes(checked_add(last, int64_t{1}, "strides"), elem, "strides");
    }
    if (nbytes < needed) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "nbytes is ", nbytes, " but ", dtype_name(dtype), to_string(s),
           " with these strides reaches ", needed, " bytes");
    }
    if (needed > 0 && data == nullptr) fail(NNRT_ERR_INVALID_ARGUMENT, "data is NULL; expected the array's elements");
    if (reinterpret_cast<uintptr_t>(data) % elem != 0) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "data (", data, ") is not aligned to the ", elem, "-byte size of ",
           dtype_name(dtype));
    }
    if (needed == 0) {
      // Nothing to read: an ordinary empty array, and the memory is the caller's again at once.
      *out = wrap(ops::zeros(*ctx->impl, dtype, s));
      if (release) release(data, user);
      return;
    }
    std::function<void()> give_back;
    if (release) give_back = [release, data, user] { release(data, user); };
    // Made before the array, so that a failure to make the handle leaves the memory unclaimed.
    auto h = std::make_unique<nnrt_array>();
    h->impl = Array::lend(device, dtype, s, st, data, nbytes, std::move(give_back));
    *out = h.release();
  });
}

nnrt_status nnrt_array_to_host(const nnrt_array *a, void *data, size_t nbytes) {
  return guard("nnrt_array_to_host", [&] {
    check_handle(a, "a");
    require(data != nullptr || nbytes == 0, "data is NULL; expected a buffer of the array's size");
    a->impl.copy_to_host(data, nbytes);
  });
}

nnrt_status nnrt_array_info(const nnrt_array *a, nnrt_dtype *dtype, int32_t *ndim, int64_t shape[NNRT_MAX_DIMS]) {
  return guard("nnrt_array_info", [&] {
    check_handle(a, "a");
    if (dtype) *dtype = a->impl.dtype();
    if (ndim) *ndim = a->impl.rank();
    if (shape)
      for (int32_t i = 0; i < a->impl.rank(); ++i) shape[i] = a->impl.dim(i);
  });
}

nnrt_status nnrt_array_nbytes(const nnrt_array *a, size_t *nbytes) {
  return guard("nnrt_array_nbytes", [&] {
    check_handle(a, "a");
    require(nbytes != nullptr, "nbytes is NULL; expected a pointer to receive the size");
    *nbytes = a->impl.nbytes();
  });
}

void nnrt_array_release(nnrt_array *a) { release_handle(a, "nnrt_array_release"); }

}  // extern "C"
