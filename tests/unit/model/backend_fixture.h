// Model tests that run once per backend: the reference backend, and oneDNN where its plugin is
// built (NNRT_TEST_ONEDNN_BUILT). A plugin that is built but does not open fails the test.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "layer_check.h"

namespace nnrt::model::testing {

#ifdef NNRT_TEST_ONEDNN_BUILT
constexpr bool kOnednnBuilt = true;
#else
constexpr bool kOnednnBuilt = false;
#endif

// The parameter names the backend; ctx_ is a context on it.
class PerBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ctx_ = make_context(GetParam());
    if (!ctx_ && GetParam() == "onednn" && !kOnednnBuilt) GTEST_SKIP() << "the oneDNN plugin is not built here";
    ASSERT_NE(ctx_, nullptr) << GetParam() << " did not open";
  }
  std::shared_ptr<Context> ctx_;
};

}  // namespace nnrt::model::testing
