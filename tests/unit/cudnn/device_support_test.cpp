// device_support.h: which GPUs this build's kernels run on (meson's list: machine code for 7.5,
// 8.0, 8.6, 8.9 and 9.0, PTX of 9.0), and which CUDA errors lose the context.
#include "device_support.h"

#include <gtest/gtest.h>

namespace nnrt::cudnn {
namespace {

TEST(ComputeCapability, MachineCodeRunsOnItsOwnMajorFromItsMinorOn) {
  EXPECT_EQ(compute_capability_problem(7, 5), "");
  EXPECT_EQ(compute_capability_problem(8, 0), "");
  EXPECT_EQ(compute_capability_problem(8, 7), "");  // sm_86's code (Jetson Orin)
  EXPECT_EQ(compute_capability_problem(8, 9), "");
  EXPECT_EQ(compute_capability_problem(9, 0), "");
}

TEST(ComputeCapability, NewerGpusCompileThePtx) {
  EXPECT_EQ(compute_capability_problem(10, 0), "");
  EXPECT_EQ(compute_capability_problem(12, 0), "");
}

TEST(ComputeCapability, OlderGpusAreRefusedWithTheBuildsArchitectures) {
  for (auto [major, minor] : {std::pair{7, 0}, std::pair{7, 2}, std::pair{6, 1}, std::pair{5, 2}}) {
    std::string m = compute_capability_problem(major, minor);
    EXPECT_NE(m.find("compute capability " + std::to_string(major) + "." + std::to_string(minor)), std::string::npos)
        << m;
    EXPECT_NE(m.find("7.5, 8.0, 8.6, 8.9, 9.0"), std::string::npos) << m;
    EXPECT_NE(m.find("from 9.0 on"), std::string::npos) << m;
  }
}

TEST(ContextLoss, FaultsLoseTheContextOtherErrorsDoNot) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorMisalignedAddress, cudaErrorLaunchFailure,
                        cudaErrorIllegalInstruction, cudaErrorAssert, cudaErrorLaunchTimeout,
                        cudaErrorHardwareStackError, cudaErrorInvalidPc, cudaErrorInvalidAddressSpace,
                        cudaErrorECCUncorrectable})
    EXPECT_TRUE(cuda_error_loses_context(e)) << e;
  for (cudaError_t e : {cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorInvalidConfiguration,
                        cudaErrorNoDevice, cudaErrorInvalidDevice, cudaErrorNotReady})
    EXPECT_FALSE(cuda_error_loses_context(e)) << e;
}

}  // namespace
}  // namespace nnrt::cudnn
