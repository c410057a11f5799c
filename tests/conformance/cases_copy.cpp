// Cases for COPY (every dtype pair, every layout), FILL and RANDOM.
#include "cases.h"

namespace nnrt::conformance {
namespace {

const std::vector<int32_t> kAllDtypes{NNRT_DTYPE_F32, NNRT_DTYPE_F64, NNRT_DTYPE_F16, NNRT_DTYPE_BF16,
                                      NNRT_DTYPE_I32, NNRT_DTYPE_I64, NNRT_DTYPE_U8,  NNRT_DTYPE_BOOL};

// Source data that exercises a conversion's rules: fractions to truncate, negatives and values
// beyond the target's range to saturate, NaN and infinities.
Fill conversion_fill(int32_t from) {
  if (from == NNRT_DTYPE_U8) return Fill::Ints(0, 255);
  if (is_float_dtype(from)) return Fill::Special(-300, 300);
  return Fill::Special(-300, 300);  // integers: the special values saturate into range first
}

Dims random_dims(Picker &p, int rank) {
  Dims d;
  for (int i = 0; i < rank; ++i) d.push_back(p.size());
  return d;
}

void add_copy_cases(Picker &p, std::vector<Case> &out) {
  // Every dtype pair, contiguous.
  for (int32_t from : kAllDtypes)
    for (int32_t to : kAllDtypes) {
      Dims d = random_dims(p, static_cast<int>(p.between(1, 3)));
      std::string tag = std::string(dtype_name(from)) + "->" + dtype_name(to);
      out.push_back(CaseBuilder(NNRT_OP_COPY, "copy/" + tag + "/" + dims_name(d), "copy/" + tag)
                        .in(make_tensor(from, d), conversion_fill(from))
                        .out(make_tensor(to, d))
                        .exact()
                        .done());
    }
  // Layouts: the views a copy makes contiguous, and strided outputs.
  struct Variant {
    Layout in, out;
    uint32_t broadcast;
  };
  const std::vector<Variant> variants{{Layout::transposed, Layout::contiguous, 0},
                                      {Layout::padded, Layout::contiguous, 0},
                                      {Layout::contiguous, Layout::padded, 0},
                                      {Layout::contiguous, Layout::transposed, 0},
                                      {Layout::channels_last, Layout::contiguous, 0},
                                      {Layout::contiguous, Layout::channels_last, 0},
                                      {Layout::contiguous, Layout::contiguous, 0b0101},
                                      {Layout::transposed, Layout::padded, 0b0010}};
  const std::vector<std::pair<int32_t, int32_t>> pairs{
      {NNRT_DTYPE_F32, NNRT_DTYPE_F32},  {NNRT_DTYPE_F32, NNRT_DTYPE_BF16}, {NNRT_DTYPE_BF16, NNRT_DTYPE_F32},
      {NNRT_DTYPE_F32, NNRT_DTYPE_F16},  {NNRT_DTYPE_F16, NNRT_DTYPE_F16},  {NNRT_DTYPE_I32, NNRT_DTYPE_I32},
      {NNRT_DTYPE_F64, NNRT_DTYPE_F64},  {NNRT_DTYPE_U8, NNRT_DTYPE_F32},   {NNRT_DTYPE_I64, NNRT_DTYPE_I64},
      {NNRT_DTYPE_BOOL, NNRT_DTYPE_BOOL}, {NNRT_DTYPE_I32, NNRT_DTYPE_F32}, {NNRT_DTYPE_F32, NNRT_DTYPE_I32}};
  for (const auto &pr : pairs)
    for (const Variant &v : variants) {
      Dims d = random_dims(p, 4);
      std::string tag = std::string(dtype_name(pr.first)) + "->" + dtype_name(pr.second);
      std::string name = "copy/" + tag + "/" + dims_name(d) + "/" + layout_name(v.in) +
                         (v.broadcast ? "+broadcast" : "") + "->" + layout_name(v.out);
      out.push_back(CaseBuilder(NNRT_OP_COPY, name, "copy/" + tag)
                        .in(make_tensor(pr.first, d, v.in, v.broadcast), conversion_fill(pr.first))
                        .out(make_tensor(pr.second, d, v.out))
                        .exact()
                        .done());
    }
  // Ranks 0, 1 and the largest.
  for (int rank : {0, 1, 6, 8}) {
    Dims d;
    for (int i = 0; i < rank; ++i) d.push_back(rank > 4 ? p.between(1, 3) : p.size());
    out.push_back(CaseBuilder(NNRT_OP_COPY, "copy/f32->bf16/rank" + std::to_string(rank) + "/" + dims_name(d),
                              "copy/f32->bf16")
                      .in(make_tensor(NNRT_DTYPE_F32, d, Layout::transposed), Fill::Special(-10, 10))
                      .out(make_tensor(NNRT_DTYPE_BF16, d))
                      .exact()
                      .done());
  }
  Dims big{64, 3, 33};
  out.push_back(CaseBuilder(NNRT_OP_COPY, "copy/f32->f32/concurrent/64x3x33/transposed", "copy/f32->f32")
                    .in(make_tensor(NNRT_DTYPE_F32, big, Layout::transposed))
                    .out(make_tensor(NNRT_DTYPE_F32, big))
                    .exact()
                    .concurrent()
                    .done());
}

void add_fill_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t t : kAllDtypes) {
    Dims d = random_dims(p, static_cast<int>(p.between(0, 3)));
    double value = is_float_dtype(t) ? -3.75 : (t == NNRT_DTYPE_BOOL ? 1 : 7);
    out.push_back(CaseBuilder(NNRT_OP_FILL, std::string("fill/") + dtype_name(t) + "/" + dims_name(d),
                              std::string("fill/") + dtype_name(t))
                      .out(make_tensor(t, d, p.chance(0.5) ? Layout::padded : Layout::contiguous))
                      .scalar(0, value)
                      .exact()
                      .done());
  }
}

void add_random_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (int32_t alg : {NNRT_RANDOM_UNIFORM, NNRT_RANDOM_NORMAL}) {
      Dims d = random_dims(p, static_cast<int>(p.between(1, 3)));
      nnrt_op_attrs a = no_attrs();
      a.alg = alg;
      a.seed = 0x5eed0000u + static_cast<uint64_t>(p.between(0, 1000));
      std::string algname = alg == NNRT_RANDOM_UNIFORM ? "uniform" : "normal";
      out.push_back(CaseBuilder(NNRT_OP_RANDOM, "random/" + algname + "/" + dtype_name(t) + "/" + dims_name(d),
                                "random/" + algname + "/" + dtype_name(t))
                        .out(make_tensor(t, d, p.chance(0.3) ? Layout::padded : Layout::contiguous), 4)
                        .attrs(a)
                        .scalar(0, alg == NNRT_RANDOM_UNIFORM ? -2.0 : 0.5)
                        .scalar(1, alg == NNRT_RANDOM_UNIFORM ? 3.0 : 2.0)
                        .counter(static_cast<uint64_t>(p.between(0, 99)))  // not always a multiple of 4
                        .done());
    }
}

}  // namespace

void add_copy_fill_random_cases(Picker &p, std::vector<Case> &out) {
  add_copy_cases(p, out);
  add_fill_cases(p, out);
  add_random_cases(p, out);
}

}  // namespace nnrt::conformance
