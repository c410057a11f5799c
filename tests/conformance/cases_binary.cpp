// Cases for BINARY: every alg and numeric dtype, broadcasting of either or both operands
// (stride 0), rank 0, strided operands and outputs, in-place accumulation, NaN propagation.
#include "cases.h"

namespace nnrt::conformance {
namespace {

struct BinaryAlg {
  int32_t alg;
  const char *name;
};
const std::vector<BinaryAlg> kAlgs{{NNRT_BINARY_ADD, "add"}, {NNRT_BINARY_SUB, "sub"}, {NNRT_BINARY_MUL, "mul"},
                                   {NNRT_BINARY_DIV, "div"}, {NNRT_BINARY_MAX, "max"}, {NNRT_BINARY_MIN, "min"}};

const std::vector<int32_t> kDtypes{NNRT_DTYPE_F32, NNRT_DTYPE_BF16, NNRT_DTYPE_F16, NNRT_DTYPE_F64,
                                   NNRT_DTYPE_I32, NNRT_DTYPE_I64,  NNRT_DTYPE_U8};

struct Operands {
  Fill a, b;
};

Operands operand_fills(int32_t alg, int32_t dtype) {
  if (dtype == NNRT_DTYPE_U8) return {Fill::Ints(0, 255), alg == NNRT_BINARY_DIV ? Fill::Ints(0, 9) : Fill::Ints(0, 255)};
  if (!is_float_dtype(dtype))  // division by zero and negative quotients included
    return {Fill::Ints(-1000, 1000), alg == NNRT_BINARY_DIV ? Fill::Ints(-7, 7) : Fill::Ints(-1000, 1000)};
  if (alg == NNRT_BINARY_DIV) return {Fill::U(-2, 2), Fill::U(0.25, 2)};
  return {Fill::U(-2, 2), Fill::U(-2, 2)};
}

// Which operand dims are broadcast (stride 0).
struct Pattern {
  const char *name;
  uint32_t a, b;
};

Pattern pick_pattern(Picker &p, int rank) {
  if (rank == 0) return {"scalar", 0, 0};
  uint32_t all = (1u << rank) - 1;
  uint32_t some = static_cast<uint32_t>(p.between(1, all));
  switch (p.between(0, 4)) {
    case 0: return {"same", 0, 0};
    case 1: return {"b-broadcast", 0, some};
    case 2: return {"a-broadcast", some, 0};
    case 3: return {"outer", some, all & ~some};  // a [M,1]-like, b [1,N]-like
    default: return {"b-all-broadcast", 0, all};
  }
}

}  // namespace

void add_binary_cases(Picker &p, std::vector<Case> &out) {
  for (const BinaryAlg &alg : kAlgs)
    for (int32_t t : kDtypes)
      for (int rep = 0; rep < 3; ++rep) {
        int rank = static_cast<int>(p.between(rep == 0 ? 0 : 1, 4));
        Dims d;
        for (int i = 0; i < rank; ++i) d.push_back(p.size());
        Pattern pat = pick_pattern(p, rank);
        Layout la = p.chance(0.25) ? Layout::transposed : Layout::contiguous;
        Layout lb = p.chance(0.25) ? Layout::padded : Layout::contiguous;
        Layout lc = p.chance(0.2) ? Layout::padded : Layout::contiguous;
        Operands f = operand_fills(alg.alg, t);
        nnrt_op_attrs at = no_attrs();
        at.alg = alg.alg;
        std::string group = std::string("binary/") + alg.name + "/" + dtype_name(t);
        std::string name = group + "/" + dims_name(d) + "/" + pat.name + "/" + layout_name(la) + "," +
                           layout_name(lb) + "->" + layout_name(lc);
        out.push_back(CaseBuilder(NNRT_OP_BINARY, name, group)
                          .in(make_tensor(t, d, la, pat.a), f.a)
                          .in(make_tensor(t, d, lb, pat.b), f.b)
                          .out(make_tensor(t, d, lc))
                          .attrs(at)
                          .exact()  // one rounding of an exact result: both sides must agree
                          .done());
      }
  // In-place accumulation: c is a's buffer, b broadcast (a bias add, a gradient sum).
  for (const BinaryAlg &alg : kAlgs)
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16}) {
      Dims d{p.size(), p.size(), p.size()};
      nnrt_op_attrs at = no_attrs();
      at.alg = alg.alg;
      Operands f = operand_fills(alg.alg, t);
      std::string group = std::string("binary/") + alg.name + "/" + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_BINARY, group + "/" + dims_name(d) + "/in-place", group)
                        .in(make_tensor(t, d), f.a)
                        .in(make_tensor(t, d, Layout::contiguous, 0b001), f.b)
                        .out(make_tensor(t, d))
                        .attrs(at)
                        .alias(0)
                        .exact()
                        .done());
    }
  // NaN, infinities and signed zeros: max and min propagate NaN, the others follow IEEE.
  for (const BinaryAlg &alg : kAlgs)
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_F64}) {
      Dims d{p.size(), 7};
      nnrt_op_attrs at = no_attrs();
      at.alg = alg.alg;
      std::string group = std::string("binary/") + alg.name + "/" + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_BINARY, group + "/" + dims_name(d) + "/nan-inf", group)
                        .in(make_tensor(t, d), Fill::Special(-2, 2))
                        .in(make_tensor(t, d), Fill::Special(-2, 2))
                        .out(make_tensor(t, d))
                        .attrs(at)
                        .exact()
                        .done());
    }
  nnrt_op_attrs add = no_attrs();
  add.alg = NNRT_BINARY_ADD;
  Dims big{64, 50, 4, 4};
  out.push_back(CaseBuilder(NNRT_OP_BINARY, "binary/add/f32/concurrent/64x50x4x4/b-broadcast", "binary/add/f32")
                    .in(make_tensor(NNRT_DTYPE_F32, big))
                    .in(make_tensor(NNRT_DTYPE_F32, big, Layout::contiguous, 0b1101))
                    .out(make_tensor(NNRT_DTYPE_F32, big))
                    .attrs(add)
                    .exact()
                    .concurrent()
                    .done());
}

}  // namespace nnrt::conformance
