// ops::attention and ops::attention_backward take one of two paths: the fused op where the device
// runs it, else matmul and softmax composed on the device (attention_ops.cpp). The oneDNN backend
// runs the fused op for f32 and refuses bf16, so bf16 on oneDNN takes the composed path: its
// results must match the fused op's on the reference backend, with causal and additive masks,
// and no op of the fused kind may run anywhere (not even on the reference fallback).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "backend/dispatch.h"
#include "backend/ops.h"
#include "backend_fixture.h"
#include "layer_check.h"

namespace nnrt::model::testing {
namespace {

class KindLog : public backend::PlacementRecorder {
 public:
  void record(int32_t kind, const std::string &backend, bool) override {
    ran.insert(std::string(backend::op_kind_name(kind)) + " on " + backend);
  }
  std::set<std::string> ran;
};

TEST(AttentionPaths, ComposedOpsMatchTheFusedOp) {
  std::shared_ptr<Context> reference = make_context("reference"), onednn = make_context("onednn");
  ASSERT_NE(reference, nullptr);
  if (!onednn && !kOnednnBuilt) GTEST_SKIP() << "the oneDNN plugin is not built here";
  ASSERT_NE(onednn, nullptr) << "the oneDNN plugin is built but did not open";
  for (bool causal : {false, true})
    for (bool masked : {false, true}) {
      const std::string what = std::string(causal ? "causal" : "full") + (masked ? ", masked" : "");
      // q has fewer positions than k (the last 5 of 7), as a generation step's prompt.
      Array q = random_uniform(*reference, NNRT_DTYPE_F32, Shape{2, 3, 5, 4}, 1, -1, 1);
      Array k = random_uniform(*reference, NNRT_DTYPE_F32, Shape{2, 3, 7, 4}, 2, -1, 1);
      Array v = random_uniform(*reference, NNRT_DTYPE_F32, Shape{2, 3, 7, 6}, 3, -1, 1);
      Array dout = random_uniform(*reference, NNRT_DTYPE_F32, Shape{2, 3, 5, 6}, 4, -1, 1);
      Array mask = random_uniform(*reference, NNRT_DTYPE_F32, Shape{5, 7}, 5, -2, 0);
      // The same values in bf16 on both sides, so that only the computation differs.
      for (Array *a : {&q, &k, &v, &dout, &mask}) *a = ops::cast(*reference, ops::cast(*reference, *a, NNRT_DTYPE_BF16), NNRT_DTYPE_F32);
      ops::AttentionParams p;
      p.causal = causal;
      p.scale = 0.5;
      const Array *m = masked ? &mask : nullptr;
      Array o = ops::attention(*reference, q, k, v, m, p);
      ops::AttentionGrads g = ops::attention_backward(*reference, q, k, v, dout, m, p);

      auto bf16 = [&](const Array &a) { return copy_to(*onednn, a, NNRT_DTYPE_BF16); };
      Array mask16 = bf16(mask);
      KindLog log;
      Array o16;
      ops::AttentionGrads g16;
      {
        backend::PlacementScope scope(&log);
        o16 = ops::attention(*onednn, bf16(q), bf16(k), bf16(v), masked ? &mask16 : nullptr, p);
        g16 = ops::attention_backward(*onednn, bf16(q), bf16(k), bf16(v), bf16(dout), masked ? &mask16 : nullptr, p);
      }
      for (const std::string &r : log.ran) EXPECT_EQ(r.find("attention"), std::string::npos) << what << ": " << r;
      // Where oneDNN has no bf16 matmul (no native bf16), the composed ops fall back one by one.
      EXPECT_TRUE(log.ran.count("matmul on onednn") || log.ran.count("matmul on reference")) << what;
      // bf16 rounds every intermediate (scores, probabilities) on the composed path.
      auto f32 = [&](const Array &a) { return copy_to(*reference, a, NNRT_DTYPE_F32); };
      EXPECT_LT(relative_error(o, f32(o16)), 3e-2) << what;
      EXPECT_LT(relative_error(g.dq, f32(g16.dq)), 5e-2) << what;
      EXPECT_LT(relative_error(g.dk, f32(g16.dk)), 5e-2) << what;
      EXPECT_LT(relative_error(g.dv, f32(g16.dv)), 5e-2) << what;
    }
}

TEST(AttentionPaths, TheFusedOpRunsWhereTheDeviceTakesIt) {
  std::shared_ptr<Context> onednn = make_context("onednn");
  if (!onednn && !kOnednnBuilt) GTEST_SKIP() << "the oneDNN plugin is not built here";
  ASSERT_NE(onednn, nullptr);
  Array q = random_uniform(*onednn, NNRT_DTYPE_F32, Shape{1, 2, 9, 8}, 1, -1, 1);
  ops::AttentionParams p;
  p.causal = true;
  KindLog log;
  {
    backend::PlacementScope scope(&log);
    Array o = ops::attention(*onednn, q, q, q, nullptr, p);
    ops::attention_backward(*onednn, q, q, q, o, nullptr, p);
  }
  EXPECT_EQ(log.ran, (std::set<std::string>{"attention on onednn", "attention_backward on onednn"}));
}

}  // namespace
}  // namespace nnrt::model::testing
