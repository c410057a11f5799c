// The backend table itself: the entry point, probe, device properties, open, and the checks every
// op_create and op_run makes (malformed descriptors and arguments), plus concurrent op_run.
#include <string.h>

#include <thread>

#include <gtest/gtest.h>

#include "reference/reference_backend.h"
#include "harness.h"
#include "test_host.h"

namespace nnrt::reftest {
namespace {

TEST(Table, EntryPointAndIdentity) {
  EXPECT_EQ(reference::backend_entry(NNRT_BACKEND_ABI_MAJOR + 1, test::test_host()), nullptr);
  EXPECT_NE(test::take_backend_error().find("ABI"), std::string::npos);
  const nnrt_backend_v1 *t = table();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->struct_size, sizeof(nnrt_backend_v1));
  EXPECT_EQ(t->abi_major, static_cast<uint32_t>(NNRT_BACKEND_ABI_MAJOR));
  EXPECT_STREQ(t->name, "reference");
  EXPECT_STREQ(t->version, "nnrt reference 0.1");
  EXPECT_EQ(t->kind, NNRT_DEVICE_CPU);
  EXPECT_EQ(t->flags, NNRT_BACKEND_HOST_MEMORY);
  EXPECT_EQ(t->mem_alloc, nullptr);
  EXPECT_EQ(t->mem_free, nullptr);
  int32_t count = 0;
  char reason[64] = "";
  EXPECT_EQ(t->probe(&count, reason, sizeof reason), 1);
  EXPECT_EQ(count, 1);
}

TEST(Table, DevicePropsAndOpen) {
  nnrt_device_props props{};
  props.struct_size = sizeof props;
  ASSERT_EQ(table()->device_props(0, &props), NNRT_OK);
  EXPECT_EQ(props.kind, NNRT_DEVICE_CPU);
  EXPECT_GT(strlen(props.name), 0u);
  EXPECT_GE(props.cores, 1);
  EXPECT_TRUE(props.native_dtypes & (1u << NNRT_DTYPE_F32));
  EXPECT_EQ(table()->device_props(1, &props), NNRT_ERR_NO_DEVICE);
  EXPECT_NE(test::take_backend_error().find("device 1"), std::string::npos);
  nnrt_device_config config{};
  config.struct_size = sizeof config;
  config.device = 1;
  nnrt_backend_instance *inst = nullptr;
  EXPECT_EQ(table()->open(&config, &inst), NNRT_ERR_NO_DEVICE);
  test::take_backend_error();
  config.device = 0;  // no pool: everything runs on the calling thread
  ASSERT_EQ(table()->open(&config, &inst), NNRT_OK);
  table()->close(inst);
}

nnrt_op_desc copy_desc() {
  Tensor x = Tensor::zeros(NNRT_DTYPE_F32, {2, 3});
  return make_desc(NNRT_OP_COPY, attrs_with(0), {&x}, {&x});
}

TEST(Table, MalformedDescriptorsAreRefusedWithTheRightStatus) {
  nnrt_op_desc d = copy_desc();
  EXPECT_EQ(create_op(d), NNRT_OK);
  d.kind = 0;
  EXPECT_EQ(create_op(d), NNRT_ERR_UNSUPPORTED);
  d.kind = NNRT_OP_KIND_COUNT + 3;
  EXPECT_EQ(create_op(d), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(last_error().find("op kind " + std::to_string(NNRT_OP_KIND_COUNT + 3)), std::string::npos) << last_error();
  d = copy_desc();
  d.struct_size = 16;
  EXPECT_EQ(create_op(d), NNRT_ERR_INVALID_ARGUMENT);
  d = copy_desc();
  d.inputs[0].struct_size = 0;
  EXPECT_EQ(create_op(d), NNRT_ERR_INVALID_ARGUMENT);
  d = copy_desc();
  d.inputs[0].dtype = 42;
  EXPECT_EQ(create_op(d), NNRT_ERR_DTYPE);
  EXPECT_NE(last_error().find("reference backend: COPY: input 0"), std::string::npos) << last_error();
  d = copy_desc();
  d.outputs[0].ndim = 9;
  EXPECT_EQ(create_op(d), NNRT_ERR_SHAPE);
  d = copy_desc();
  d.inputs[0].dims[1] = -3;
  EXPECT_EQ(create_op(d), NNRT_ERR_SHAPE);
  d = copy_desc();
  d.inputs[0].dims[0] = d.outputs[0].dims[0] = int64_t{1} << 40;
  d.inputs[0].dims[1] = d.outputs[0].dims[1] = int64_t{1} << 40;
  d.inputs[0].strides[0] = d.outputs[0].strides[0] = int64_t{1} << 40;
  EXPECT_EQ(create_op(d), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("too large"), std::string::npos) << last_error();
  d = copy_desc();
  d.n_inputs = NNRT_OP_MAX_INPUTS + 1;
  EXPECT_EQ(create_op(d), NNRT_ERR_INVALID_ARGUMENT);
  d = copy_desc();
  d.n_outputs = 0;
  EXPECT_EQ(create_op(d), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("expected 1 input (x) and 1 output (y); got 1 input and 0 outputs"), std::string::npos)
      << last_error();
}

TEST(Table, RunArgumentsAreChecked) {
  Tensor a = Tensor::random(NNRT_DTYPE_F32, {64, 64}, 1), c = Tensor::zeros(NNRT_DTYPE_F32, {64, 64});
  const nnrt_op_desc d = make_desc(NNRT_OP_MATMUL, attrs_with(0), {&a, &a}, {&c});
  nnrt_backend_instance *inst = instance(1);
  nnrt_backend_op *op = nullptr;
  size_t workspace_bytes = 0;
  ASSERT_EQ(table()->op_create(inst, &d, &op, &workspace_bytes), NNRT_OK);
  ASSERT_GT(workspace_bytes, 0u);
  std::vector<unsigned char> workspace(workspace_bytes);
  const void *inputs[2] = {a.data(), a.data()};
  void *outputs[1] = {c.data()};
  nnrt_op_args args{};
  args.struct_size = sizeof args;
  args.n_inputs = 2;
  args.n_outputs = 1;
  args.inputs = inputs;
  args.outputs = outputs;
  args.workspace = workspace.data();
  args.workspace_bytes = workspace_bytes;
  EXPECT_EQ(table()->op_run(op, &args), NNRT_OK);
  nnrt_op_args bad = args;
  bad.n_inputs = 1;
  EXPECT_EQ(table()->op_run(op, &bad), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(test::take_backend_error().find("MATMUL"), std::string::npos);
  bad = args;
  bad.workspace_bytes = workspace_bytes - 1;
  EXPECT_EQ(table()->op_run(op, &bad), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(test::take_backend_error().find("workspace"), std::string::npos);
  const void *null_inputs[2] = {a.data(), nullptr};
  bad = args;
  bad.inputs = null_inputs;
  EXPECT_EQ(table()->op_run(op, &bad), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(table()->op_run(op, nullptr), NNRT_ERR_INVALID_ARGUMENT);
  test::take_backend_error();
  // Several threads may run one op at once, each with its own arguments.
  std::vector<Tensor> outs;
  for (int i = 0; i < 4; ++i) outs.push_back(Tensor::zeros(NNRT_DTYPE_F32, {64, 64}));
  std::vector<std::thread> threads;
  std::vector<nnrt_status> statuses(4);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      std::vector<unsigned char> ws(workspace_bytes);
      void *o[1] = {outs[i].data()};
      nnrt_op_args mine = args;
      mine.outputs = o;
      mine.workspace = ws.data();
      statuses[i] = table()->op_run(op, &mine);
    });
  for (auto &t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(statuses[i], NNRT_OK);
    EXPECT_EQ(outs[i].values(), c.values());
  }
  table()->op_destroy(op);
}

TEST(Table, SupportsAgreesWithCreateAndSetsNoError) {
  nnrt_op_desc good = copy_desc(), bad = copy_desc();
  bad.outputs[0].dims[0] = 5;
  EXPECT_EQ(table()->supports(instance(1), &good), 1);
  EXPECT_EQ(table()->supports(instance(1), &bad), 0);
  EXPECT_EQ(test::take_backend_error(), "");
}

}  // namespace
}  // namespace nnrt::reftest
