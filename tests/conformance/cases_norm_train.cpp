// Cases for BATCHNORM (training, inference), BATCHNORM_BACKWARD and the training ops: LOSS and
// LOSS_BACKWARD (every loss, index and distribution targets), DROPOUT and its backward, GATHER and
// SCATTER_ADD, OPTIMIZER_UPDATE (every optimizer with its options; outputs are read and written).
#include <cmath>

#include "cases.h"

namespace nnrt::conformance {
namespace {

// A training-mode batchnorm backward case on f32 [3, 4, 5, 5] with the given fills of x and dy
// (mean, var and gamma in their usual ranges). x may hold large values (+-3e9, an outlier): dgamma's
// sum over a channel then cancels large terms, so each output element's tolerance grows with the
// magnitudes of its own channel (the op on |inputs|), and channels of ordinary values stay tight.
Case batchnorm_backward_3x4x5x5(const std::string &fills, Fill x, Fill dy) {
  nnrt_op_attrs a = no_attrs();
  a.eps = 1e-5;
  a.flags = NNRT_FLAG_TRAINING;
  Dims d{3, 4, 5, 5};
  const double m = std::sqrt(3.0 * 5 * 5);  // a channel's sums grow like the root of its length
  Case c = CaseBuilder(NNRT_OP_BATCHNORM_BACKWARD, "batchnorm_backward/f32/3x4x5x5/" + fills, "batchnorm_backward/f32")
               .in(make_tensor(NNRT_DTYPE_F32, d), x)
               .in(make_tensor(NNRT_DTYPE_F32, d), dy)
               .in(make_tensor(NNRT_DTYPE_F32, {4}), Fill::U(0, 1))
               .in(make_tensor(NNRT_DTYPE_F32, {4}), Fill::U(0.5, 2))
               .in(make_tensor(NNRT_DTYPE_F32, {4}), Fill::U(0.5, 1.5))
               .out(make_tensor(NNRT_DTYPE_F32, d), 2)
               .out(make_tensor(NNRT_DTYPE_F32, {4}), 3 * m)
               .out(make_tensor(NNRT_DTYPE_F32, {4}), m)
               .attrs(a)
               .done();
  c.linear_magnitudes = true;
  return c;
}

Dims activation_dims(Picker &p) {
  Dims d{p.between(1, 5), p.size()};
  int spatial = static_cast<int>(p.between(0, 3));
  for (int i = 0; i < spatial; ++i) d.push_back(p.between(1, 7));
  return d;
}

int64_t per_channel_count(const Dims &d) {
  int64_t n = 1;
  for (size_t i = 0; i < d.size(); ++i)
    if (i != 1) n *= d[i];
  return n;
}

void add_batchnorm(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (bool training : {true, false})
      for (int rep = 0; rep < (t == NNRT_DTYPE_F32 ? 5 : 2); ++rep) {
        Dims d = activation_dims(p);
        const Dims c{d[1]};
        nnrt_op_attrs a = no_attrs();
        a.eps = 1e-5;
        a.flags = training ? NNRT_FLAG_TRAINING : 0;
        Layout lx = d.size() == 4 && p.chance(0.3) ? Layout::channels_last : (p.chance(0.2) ? Layout::padded : Layout::contiguous);
        Layout ly = p.chance(0.2) ? Layout::padded : lx;
        std::string group = std::string("batchnorm/") + (training ? "training/" : "inference/") + dtype_name(t);
        CaseBuilder b(NNRT_OP_BATCHNORM, group + "/" + dims_name(d) + "/x:" + layout_name(lx) + "/y:" + layout_name(ly),
                      group);
        b.in(make_tensor(t, d, lx), Fill::U(-2, 3))
            .in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(0.5, 1.5))
            .in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(-0.5, 0.5));
        if (!training)
          b.in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(-0.5, 0.5)).in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(0.5, 2));
        b.out(make_tensor(t, d, ly), 2).attrs(a);
        if (training) b.out(make_tensor(NNRT_DTYPE_F32, c), 1).out(make_tensor(NNRT_DTYPE_F32, c), 2);
        out.push_back(b.done());

        if (!training) continue;
        std::string bgroup = std::string("batchnorm_backward/") + dtype_name(t);
        const double m = std::sqrt(double(per_channel_count(d)));
        out.push_back(CaseBuilder(NNRT_OP_BATCHNORM_BACKWARD,
                                  bgroup + "/" + dims_name(d) + "/x:" + layout_name(lx) + "/dy:" + layout_name(ly), bgroup)
                          .in(make_tensor(t, d, lx), Fill::U(-2, 3))
                          .in(make_tensor(t, d, ly))
                          .in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(0, 1))
                          .in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(0.5, 2))
                          .in(make_tensor(NNRT_DTYPE_F32, c), Fill::U(0.5, 1.5))
                          .out(make_tensor(t, d, lx), 2)
                          .out(make_tensor(NNRT_DTYPE_F32, c), 3 * m)
                          .out(make_tensor(NNRT_DTYPE_F32, c), m)
                          .attrs(a)
                          .done());
      }
  {
    // NaN and infinities in x (whole channels become NaN).
    nnrt_op_attrs a = no_attrs();
    a.eps = 1e-5;
    a.flags = NNRT_FLAG_TRAINING;
    Dims d{3, 4, 5, 5};
    // A channel's mean and variance may be sums of +-3e9 terms: their tolerance grows with that
    // channel's magnitudes (the op on |x|), and the other channels' stay tight.
    Case c = CaseBuilder(NNRT_OP_BATCHNORM, "batchnorm/training/f32/3x4x5x5/nan-inf", "batchnorm/training/f32")
                 .in(make_tensor(NNRT_DTYPE_F32, d), Fill::Special(-2, 2))
                 .in(make_tensor(NNRT_DTYPE_F32, {4}), Fill::U(0.5, 1.5))
                 .in(make_tensor(NNRT_DTYPE_F32, {4}))
                 .out(make_tensor(NNRT_DTYPE_F32, d), 2)
                 .out(make_tensor(NNRT_DTYPE_F32, {4}), 1)
                 .out(make_tensor(NNRT_DTYPE_F32, {4}), 2)
                 .attrs(a)
                 .done();
    c.linear_magnitudes = true;
    out.push_back(c);
    out.push_back(batchnorm_backward_3x4x5x5("nan-inf", Fill::Special(-2, 2), Fill::U(-1, 1)));
  }
  for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16}) {
    // x channels-last, as a convolution leaves it, and dy and dx plain, as the gradient of the
    // layer above comes: a backend may have to bring them to one layout first.
    nnrt_op_attrs a = no_attrs();
    a.eps = 1e-5;
    a.flags = NNRT_FLAG_TRAINING;
    Dims d{4, 8, 7, 7};
    const double m = std::sqrt(double(per_channel_count(d)));
    std::string group = std::string("batchnorm_backward/") + dtype_name(t);
    out.push_back(CaseBuilder(NNRT_OP_BATCHNORM_BACKWARD, group + "/4x8x7x7/x:nhwc/dy:contiguous/dx:contiguous", group)
                      .in(make_tensor(t, d, Layout::channels_last), Fill::U(-2, 3))
                      .in(make_tensor(t, d))
                      .in(make_tensor(NNRT_DTYPE_F32, {8}), Fill::U(0, 1))
                      .in(make_tensor(NNRT_DTYPE_F32, {8}), Fill::U(0.5, 2))
                      .in(make_tensor(NNRT_DTYPE_F32, {8}), Fill::U(0.5, 1.5))
                      .out(make_tensor(t, d), 2)
                      .out(make_tensor(NNRT_DTYPE_F32, {8}), 3 * m)
                      .out(make_tensor(NNRT_DTYPE_F32, {8}), m)
                      .attrs(a)
                      .done());
  }
  nnrt_op_attrs a = no_attrs();
  a.eps = 1e-5;
  a.flags = NNRT_FLAG_TRAINING;
  Dims d{32, 20, 6, 6};
  out.push_back(CaseBuilder(NNRT_OP_BATCHNORM, "batchnorm/training/f32/concurrent/32x20x6x6", "batchnorm/training/f32")
                    .in(make_tensor(NNRT_DTYPE_F32, d))
                    .in(make_tensor(NNRT_DTYPE_F32, {20}), Fill::U(0.5, 1.5))
                    .in(make_tensor(NNRT_DTYPE_F32, {20}))
                    .out(make_tensor(NNRT_DTYPE_F32, d), 2)
                    .out(make_tensor(NNRT_DTYPE_F32, {20}))
                    .out(make_tensor(NNRT_DTYPE_F32, {20}), 2)
                    .attrs(a)
                    .concurrent()
                    .done());
}

void add_losses(Picker &p, std::vector<Case> &out) {
  struct Loss {
    int32_t alg;
    const char *name;
    Fill pred, target;
    bool classes;
  };
  const std::vector<Loss> losses{
      {NNRT_LOSS_SOFTMAX_CROSS_ENTROPY, "softmax_cross_entropy", Fill::U(-3, 3), Fill::U(0, 1), true},
      {NNRT_LOSS_NLL, "nll", Fill::U(-4, -0.01), Fill::U(0, 1), true},
      {NNRT_LOSS_MSE, "mse", Fill::U(-2, 2), Fill::U(-2, 2), false},
      {NNRT_LOSS_L1, "l1", Fill::U(-2, 2), Fill::U(-2, 2), false},
      {NNRT_LOSS_BCE, "bce", Fill::U(0.01, 0.99), Fill::U(0, 1), false},
      {NNRT_LOSS_BCE_WITH_LOGITS, "bce_with_logits", Fill::U(-4, 4), Fill::U(0, 1), false}};
  for (const Loss &l : losses)
    for (int32_t t : float_dtypes())
      for (int32_t target : {0, int32_t(NNRT_DTYPE_I32), int32_t(NNRT_DTYPE_I64)}) {  // 0: a float target like pred
        if (target != 0 && !l.classes) continue;
        Dims pd;
        if (l.classes) {
          pd = {p.size(), p.between(1, 11)};
        } else {
          int rank = static_cast<int>(p.between(1, 3));
          for (int i = 0; i < rank; ++i) pd.push_back(p.size());
        }
        nnrt_op_attrs a = no_attrs();
        a.alg = l.alg;
        nnrt_tensor_desc tgt = target != 0 ? make_tensor(target, {pd[0]}) : make_tensor(t, pd);
        Fill tf = target != 0 ? Fill::Ints(0, double(pd[1] - 1)) : l.target;
        std::string tname = target != 0 ? std::string("/target:") + dtype_name(target) : "/target:float";
        std::string group = std::string("loss/") + l.name + "/" + dtype_name(t) + tname;
        out.push_back(CaseBuilder(NNRT_OP_LOSS, group + "/" + dims_name(pd), group)
                          .in(make_tensor(t, pd), l.pred)
                          .in(tgt, tf)
                          .out(make_tensor(t, {}), 4)
                          .attrs(a)
                          .done());
        std::string bgroup = std::string("loss_backward/") + l.name + "/" + dtype_name(t) + tname;
        out.push_back(CaseBuilder(NNRT_OP_LOSS_BACKWARD, bgroup + "/" + dims_name(pd), bgroup)
                          .in(make_tensor(t, pd), l.pred)
                          .in(tgt, tf)
                          .out(make_tensor(t, pd, p.chance(0.2) ? Layout::padded : Layout::contiguous), 1)
                          .attrs(a)
                          .scalar(0, p.chance(0.5) ? 1.0 : 128.0)
                          .done());
      }
}

void add_dropout(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (double prob : {0.0, 0.3, 0.5}) {
      Dims d{p.size(), p.size(), p.size()};
      nnrt_op_attrs a = no_attrs();
      a.alpha = prob;
      a.seed = 77 + static_cast<uint64_t>(p.between(0, 100));
      std::string group = std::string("dropout/") + dtype_name(t);
      std::string suffix = "/p" + std::to_string(prob).substr(0, 3) + "/" + dims_name(d);
      out.push_back(CaseBuilder(NNRT_OP_DROPOUT, group + suffix, group)
                        .in(make_tensor(t, d, p.chance(0.3) ? Layout::transposed : Layout::contiguous))
                        .out(make_tensor(t, d), 1)
                        .out(make_tensor(NNRT_DTYPE_U8, d))
                        .attrs(a)
                        .counter(static_cast<uint64_t>(p.between(0, 1000)))
                        .done());
      std::string bgroup = std::string("dropout_backward/") + dtype_name(t);
      out.push_back(CaseBuilder(NNRT_OP_DROPOUT_BACKWARD, bgroup + suffix, bgroup)
                        .in(make_tensor(t, d))
                        .in(make_tensor(NNRT_DTYPE_U8, d), Fill::Ints(0, 1))
                        .out(make_tensor(t, d), 1)
                        .attrs(a)
                        .done());
    }
}

void add_gather_scatter(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (int32_t it : {NNRT_DTYPE_I32, NNRT_DTYPE_I64}) {
      const int64_t v = p.size(), dd = p.size();
      Dims idx{p.size()};
      if (p.chance(0.5)) idx.push_back(p.small_size());
      Dims yd = idx;
      yd.push_back(dd);
      Fill indices = Fill::Ints(0, double(v - 1));
      std::string suffix = std::string("/") + dtype_name(t) + "/index:" + dtype_name(it) + "/table" +
                           std::to_string(v) + "x" + std::to_string(dd) + "/indices" + dims_name(idx);
      out.push_back(CaseBuilder(NNRT_OP_GATHER, "gather" + suffix, std::string("gather/") + dtype_name(t))
                        .in(make_tensor(t, {v, dd}, p.chance(0.3) ? Layout::padded : Layout::contiguous))
                        .in(make_tensor(it, idx), indices)
                        .out(make_tensor(t, yd))
                        .exact()
                        .done());
      double repeats = std::sqrt(double(yd[0] * (idx.size() > 1 ? idx[1] : 1)) / double(v) + 1);
      out.push_back(CaseBuilder(NNRT_OP_SCATTER_ADD, "scatter_add" + suffix, std::string("scatter_add/") + dtype_name(t))
                        .in(make_tensor(t, yd))
                        .in(make_tensor(it, idx), indices)
                        .out(make_tensor(t, {v, dd}), 2 * repeats)
                        .done());
    }
}

void add_optimizers(Picker &p, std::vector<Case> &out) {
  struct Opt {
    int32_t alg;
    const char *name;
    int states;
    Fill s0, s1;
  };
  const std::vector<Opt> opts{{NNRT_OPTIMIZER_SGD, "sgd", 0, {}, {}},
                              {NNRT_OPTIMIZER_SGD, "sgd_momentum", 1, Fill::U(-1, 1), {}},
                              {NNRT_OPTIMIZER_SGD, "sgd_nesterov", 1, Fill::U(-1, 1), {}},
                              {NNRT_OPTIMIZER_ADAGRAD, "adagrad", 1, Fill::U(0, 2), {}},
                              {NNRT_OPTIMIZER_ADAM, "adam", 2, Fill::U(-1, 1), Fill::U(0, 1)},
                              {NNRT_OPTIMIZER_ADAMW, "adamw", 2, Fill::U(-1, 1), Fill::U(0, 1)},
                              {NNRT_OPTIMIZER_RMSPROP, "rmsprop", 1, Fill::U(0, 1), {}},
                              {NNRT_OPTIMIZER_ADAMAX, "adamax", 2, Fill::U(-1, 1), Fill::U(0.1, 1)}};
  struct Extras {
    const char *name;
    double l1, l2, weight_decay, clip, factor;
  };
  const std::vector<Extras> extras{{"plain", 0, 0, 0, 0, 1},
                                   {"l1+l2", 1e-3, 5e-4, 0, 0, 1},
                                   {"decay+clip+scaled", 0, 0, 0.01, 0.5, 0.5}};
  for (const Opt &o : opts)
    for (const Extras &e : extras) {
      Dims d{p.size(), p.size()};
      nnrt_op_attrs a = no_attrs();
      a.alg = o.alg;
      a.eps = 1e-8;
      a.momentum = o.states > 0 && o.alg == NNRT_OPTIMIZER_SGD ? 0.9 : 0;
      a.flags = std::string(o.name) == "sgd_nesterov" ? NNRT_FLAG_NESTEROV : 0;
      a.beta1 = o.alg == NNRT_OPTIMIZER_RMSPROP ? 0.99 : 0.9;
      a.beta2 = 0.999;
      a.l1 = e.l1;
      a.l2 = e.l2;
      a.weight_decay = e.weight_decay;
      a.clip_value = e.clip;
      std::string group = std::string("optimizer_update/") + o.name;
      CaseBuilder b(NNRT_OP_OPTIMIZER_UPDATE, group + "/" + e.name + "/" + dims_name(d), group);
      b.in(make_tensor(NNRT_DTYPE_F32, d), Fill::U(-2, 2)).out(make_tensor(NNRT_DTYPE_F32, d), 1, Fill::U(-1, 1));
      if (o.states >= 1) b.out(make_tensor(NNRT_DTYPE_F32, d), 1, o.s0);
      if (o.states >= 2) b.out(make_tensor(NNRT_DTYPE_F32, d), 1, o.s1);
      b.attrs(a).scalar(0, 0.01).scalar(1, 3).scalar(2, e.factor);
      out.push_back(b.done());
    }
}

}  // namespace

void add_batchnorm_cases(Picker &p, std::vector<Case> &out) { add_batchnorm(p, out); }

void add_batchnorm_outlier_cases(std::vector<Case> &out) {
  // One x of 5e19 in channel 0, its dy 1: dx there is about 5e19^2 / 75 times gamma and inv_std^3,
  // finite, but (x - mean)^2 on the way is not a float (oneDNN 2.6's f32 kernel gave +-inf).
  out.push_back(batchnorm_backward_3x4x5x5("outlier-5e19", Fill::Outlier(-2, 2, 5e19), Fill::Outlier(-1, 1, 1)));
}

void add_training_cases(Picker &p, std::vector<Case> &out) {
  add_losses(p, out);
  add_dropout(p, out);
  add_gather_scatter(p, out);
  add_optimizers(p, out);
}

}  // namespace nnrt::conformance
