// The ONNX importer and exporter through the C API: models built here with the real schema
// (onnx.pb.h), every bad-input path of the issue (truncated or corrupt protobuf, a cycle, a dangling
// name, data size against shape, external data outside the folder or missing, huge declared dims),
// and an imported model that predicts, saves, loads, trains and exports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "nnrt/nnrt.h"
#include "onnx.pb.h"

namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/nnrt-onnx-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

void write(const std::string &path, const std::string &bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A tensor of `type` holding the values `v` as raw data.
template <class T>
onnx::TensorProto tensor(const std::string &name, int32_t type, const std::vector<int64_t> &dims, const std::vector<T> &v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(v.data(), v.size() * sizeof(T));
  return t;
}

onnx::TensorProto floats(const std::string &name, std::vector<int64_t> dims, std::vector<float> v) {
  return tensor(name, onnx::TensorProto::FLOAT, dims, v);
}

void set_input(onnx::ValueInfoProto &v, const std::string &name, std::vector<int64_t> dims) {
  v.set_name(name);
  auto &t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(onnx::TensorProto::FLOAT);
  t.mutable_shape()->add_dim()->set_dim_param("N");
  for (int64_t d : dims) t.mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto &node(onnx::GraphProto &g, const std::string &op, std::vector<std::string> in, const std::string &out) {
  onnx::NodeProto &n = *g.add_node();
  n.set_op_type(op);
  n.set_name(out);
  for (auto &i : in) n.add_input(i);
  n.add_output(out);
  return n;
}

// x [N, 4] -> Gemm(W [3, 4], b [3], transB) -> Relu -> Gemm(W2 [2, 3]) -> Softmax: y [N, 2].
onnx::ModelProto mlp() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto &g = *m.mutable_graph();
  set_input(*g.add_input(), "x", {4});
  *g.add_initializer() = floats("W", {3, 4}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f, 0.9f, 1.0f, -1.1f, 1.2f});
  *g.add_initializer() = floats("b", {3}, {0.01f, 0.02f, -0.03f});
  *g.add_initializer() = floats("W2", {2, 3}, {0.5f, -0.5f, 0.25f, -0.25f, 0.75f, 1.0f});
  auto &gemm = node(g, "Gemm", {"x", "W", "b"}, "h");
  auto *a = gemm.add_attribute();
  a->set_name("transB");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  node(g, "Relu", {"h"}, "r");
  auto &gemm2 = node(g, "Gemm", {"r", "W2"}, "z");
  *gemm2.add_attribute() = *a;
  node(g, "Softmax", {"z"}, "y");
  set_input(*g.add_output(), "y", {2});
  return m;
}

struct Context {
  nnrt_context *ctx = nullptr;
  Context() { EXPECT_EQ(nnrt_context_create("{\"backend\": \"reference\"}", &ctx), NNRT_OK); }
  ~Context() { nnrt_context_release(ctx); }
};

nnrt_status import(Context &c, const onnx::ModelProto &m, std::string *msg = nullptr) {
  std::string bytes = m.SerializeAsString();
  nnrt_model *out = nullptr;
  nnrt_status s = nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), nullptr, &out);
  if (msg) *msg = nnrt_last_error();
  nnrt_model_release(out);
  return s;
}

std::vector<float> predict(nnrt_model *m, nnrt_context *ctx, const std::vector<float> &x, std::vector<int64_t> shape) {
  nnrt_array *a = nullptr, *y = nullptr;
  EXPECT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, static_cast<int32_t>(shape.size()), shape.data(), x.data(),
                                 x.size() * 4, &a), NNRT_OK);
  EXPECT_EQ(nnrt_model_predict(m, a, &y), NNRT_OK) << nnrt_last_error();
  size_t nbytes = 0;
  nnrt_array_nbytes(y, &nbytes);
  std::vector<float> out(nbytes / 4);
  nnrt_array_to_host(y, out.data(), nbytes);
  nnrt_array_release(a);
  nnrt_array_release(y);
  return out;
}

TEST(OnnxImport, MlpPredictsWhatTheGraphComputes) {
  Context c;
  Dir dir;
  std::string path = dir.path + "/mlp.onnx";
  write(path, mlp().SerializeAsString());
  nnrt_model *m = nullptr;
  ASSERT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &m), NNRT_OK) << nnrt_last_error();
  std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 2, -3};
  std::vector<float> y = predict(m, c.ctx, x, {2, 4});
  // By hand: h = relu(x W^T + b), z = h W2^T, y = softmax(z).
  const float W[3][4] = {{0.1f, -0.2f, 0.3f, 0.4f}, {-0.5f, 0.6f, 0.7f, -0.8f}, {0.9f, 1.0f, -1.1f, 1.2f}};
  const float b[3] = {0.01f, 0.02f, -0.03f}, W2[2][3] = {{0.5f, -0.5f, 0.25f}, {-0.25f, 0.75f, 1.0f}};
  for (int n = 0; n < 2; ++n) {
    float h[3], z[2];
    for (int j = 0; j < 3; ++j) {
      h[j] = b[j];
      for (int k = 0; k < 4; ++k) h[j] += x[n * 4 + k] * W[j][k];
      h[j] = std::max(h[j], 0.0f);
    }
    for (int j = 0; j < 2; ++j) z[j] = h[0] * W2[j][0] + h[1] * W2[j][1] + h[2] * W2[j][2];
    float e0 = std::exp(z[0]), e1 = std::exp(z[1]);
    EXPECT_NEAR(y[n * 2], e0 / (e0 + e1), 1e-6);
    EXPECT_NEAR(y[n * 2 + 1], e1 / (e0 + e1), 1e-6);
  }
  // Saves to safetensors and loads back to the same outputs; exports and re-imports too.
  std::string st = dir.path + "/mlp.safetensors", ox = dir.path + "/again.onnx";
  ASSERT_EQ(nnrt_model_save(m, st.c_str()), NNRT_OK) << nnrt_last_error();
  ASSERT_EQ(nnrt_model_export_onnx(m, ox.c_str()), NNRT_OK) << nnrt_last_error();
  nnrt_model *loaded = nullptr, *again = nullptr;
  ASSERT_EQ(nnrt_model_load(c.ctx, st.c_str(), &loaded), NNRT_OK) << nnrt_last_error();
  ASSERT_EQ(nnrt_model_import_onnx(c.ctx, ox.c_str(), nullptr, &again), NNRT_OK) << nnrt_last_error();
  EXPECT_EQ(predict(loaded, c.ctx, x, {2, 4}), y);
  std::vector<float> y2 = predict(again, c.ctx, x, {2, 4});
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y2[i], y[i], 1e-6);
  nnrt_model_release(loaded);
  nnrt_model_release(again);
  nnrt_model_release(m);
}

// The JSON text of nnrt_model_summary.
std::string summary(nnrt_model *m) {
  size_t len = 0;
  nnrt_model_summary(m, nullptr, 0, &len);
  std::string s(len + 1, '\0');
  nnrt_model_summary(m, s.data(), s.size(), &len);
  s.resize(len);
  return s;
}

// x [N, 1, 3, 3] -> Conv(1x1, 2 filters) -> Clip(0, 6) -> Conv(1x1, 1 filter) = d -> Relu = r;
// y = d + r. The Clip fuses into the first convolution as relu6; the Relu does not fuse into the
// second, whose output the Add reads too.
TEST(OnnxImport, ActivationsFuseIntoTheConvolutionBeforeThem) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto &g = *model.mutable_graph();
  set_input(*g.add_input(), "x", {1, 3, 3});
  *g.add_initializer() = floats("W", {2, 1, 1, 1}, {2, -3});
  *g.add_initializer() = floats("b", {2}, {1, 0.5f});
  *g.add_initializer() = floats("W2", {1, 2, 1, 1}, {1, -1});
  *g.add_initializer() = floats("lo", {}, {0});
  *g.add_initializer() = floats("hi", {}, {6});
  node(g, "Conv", {"x", "W", "b"}, "z");
  node(g, "Clip", {"z", "lo", "hi"}, "a");
  node(g, "Conv", {"a", "W2"}, "d");
  node(g, "Relu", {"d"}, "r");
  node(g, "Add", {"d", "r"}, "y");
  set_input(*g.add_output(), "y", {1, 3, 3});
  Context c;
  Dir dir;
  std::string path = dir.path + "/convs.onnx", again_path = dir.path + "/again.onnx";
  write(path, model.SerializeAsString());
  nnrt_model *m = nullptr, *again = nullptr;
  ASSERT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &m), NNRT_OK) << nnrt_last_error();
  const std::string s = summary(m);
  EXPECT_NE(s.find("\"activation\":\"relu6\""), std::string::npos) << s;
  EXPECT_EQ(s.find("\"type\":\"clip\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"type\":\"activation\""), std::string::npos) << s;
  std::vector<float> x = {-2, -1, 0, 0.5f, 1, 2, 3, -0.5f, 4};
  std::vector<float> y = predict(m, c.ctx, x, {1, 1, 3, 3});
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float d = std::min(std::max(2 * x[i] + 1, 0.0f), 6.0f) - std::min(std::max(-3 * x[i] + 0.5f, 0.0f), 6.0f);
    EXPECT_FLOAT_EQ(y[i], d + std::max(d, 0.0f)) << "at " << i;
  }
  // relu6 exports as Clip(0, 6), which imports fused again.
  ASSERT_EQ(nnrt_model_export_onnx(m, again_path.c_str()), NNRT_OK) << nnrt_last_error();
  ASSERT_EQ(nnrt_model_import_onnx(c.ctx, again_path.c_str(), nullptr, &again), NNRT_OK) << nnrt_last_error();
  EXPECT_NE(summary(again).find("\"activation\":\"relu6\""), std::string::npos) << summary(again);
  EXPECT_EQ(predict(again, c.ctx, x, {1, 1, 3, 3}), y);
  nnrt_model_release(again);
  nnrt_model_release(m);
}

TEST(OnnxImport, WithALossTheModelTrains) {
  Context c;
  std::string bytes = mlp().SerializeAsString();
  nnrt_model *m = nullptr;
  nnrt_trainer *t = nullptr;
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), nullptr, &m), NNRT_OK);
  EXPECT_EQ(nnrt_trainer_create(m, "{}", &t), NNRT_ERR_INVALID_ARGUMENT);  // no loss: no output layer
  nnrt_model_release(m);
  ASSERT_EQ(nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), "{\"loss\": \"nll\"}", &m), NNRT_OK)
      << nnrt_last_error();
  ASSERT_EQ(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1}}", &t), NNRT_OK)
      << nnrt_last_error();
  // Two separable classes: the loss must fall.
  std::vector<float> x;
  std::vector<int64_t> labels;
  for (int i = 0; i < 16; ++i) {
    float s = i % 2 ? 1.0f : -1.0f;
    for (int k = 0; k < 4; ++k) x.push_back(s * (0.5f + 0.1f * k) + 0.05f * ((i * 7 + k) % 5 - 2));
    labels.push_back(1 - i % 2);  // the opposite of what the initial weights say
  }
  int64_t xs[2] = {16, 4}, ys[1] = {16};
  nnrt_array *xa = nullptr, *ya = nullptr;
  ASSERT_EQ(nnrt_array_from_host(c.ctx, NNRT_DTYPE_F32, 2, xs, x.data(), x.size() * 4, &xa), NNRT_OK);
  ASSERT_EQ(nnrt_array_from_host(c.ctx, NNRT_DTYPE_I64, 1, ys, labels.data(), labels.size() * 8, &ya), NNRT_OK);
  double first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    ASSERT_EQ(nnrt_trainer_step(t, xa, ya, &last), NNRT_OK) << nnrt_last_error();
    if (step == 0) first = last;
  }
  EXPECT_LT(last, first * 0.5) << "first " << first << ", last " << last;
  nnrt_array_release(xa);
  nnrt_array_release(ya);
  nnrt_trainer_release(t);
  nnrt_model_release(m);
}

TEST(OnnxImport, BadArguments) {
  Context c;
  nnrt_model *m = nullptr;
  EXPECT_EQ(nnrt_model_import_onnx(nullptr, "x.onnx", nullptr, &m), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, nullptr, nullptr, &m), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, "x.onnx", nullptr, nullptr), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, "/nonexistent/x.onnx", nullptr, &m), NNRT_ERR_IO);
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, nullptr, 10, nullptr, &m), NNRT_ERR_INVALID_ARGUMENT);
  std::string bytes = mlp().SerializeAsString();
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), "{\"bogus\": 1}", &m),
            NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnrt_last_error()).find("bogus"), std::string::npos) << nnrt_last_error();
  EXPECT_EQ(nnrt_model_export_onnx(nullptr, "x.onnx"), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
}

TEST(OnnxImport, TruncatedAndCorruptProtobufNeverCrash) {
  Context c;
  std::string bytes = mlp().SerializeAsString();
  nnrt_model *m = nullptr;
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, "", 0, nullptr, &m), NNRT_ERR_CORRUPT);  // no graph
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, "\xff\xff\xff", 3, nullptr, &m), NNRT_ERR_CORRUPT);
  int ok = 0;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    nnrt_status s = nnrt_model_import_onnx_memory(c.ctx, bytes.data(), cut, nullptr, &m);
    EXPECT_TRUE(s == NNRT_ERR_CORRUPT || s == NNRT_ERR_UNSUPPORTED || s == NNRT_OK) << cut << ": " << nnrt_last_error();
    if (s == NNRT_OK) ++ok, nnrt_model_release(m), m = nullptr;
  }
  EXPECT_LT(ok, 3);  // only cuts that leave a complete model (the trailing output info) may import
  for (size_t i = 0; i < bytes.size(); i += 3) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    nnrt_status s = nnrt_model_import_onnx_memory(c.ctx, flipped.data(), flipped.size(), nullptr, &m);
    EXPECT_TRUE(s == NNRT_ERR_CORRUPT || s == NNRT_ERR_UNSUPPORTED || s == NNRT_ERR_SHAPE || s == NNRT_OK)
        << i << ": " << nnrt_status_name(s) << " " << nnrt_last_error();
    nnrt_model_release(m);
    m = nullptr;
  }
}

TEST(OnnxImport, CycleAndDanglingNamesAreCorrupt) {
  Context c;
  std::string msg;
  onnx::ModelProto m = mlp();
  m.mutable_graph()->mutable_node(1)->set_input(0, "y");  // Relu reads the Softmax: a cycle
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'r'"), std::string::npos) << msg;
  m = mlp();
  m.mutable_graph()->mutable_node(2)->set_input(0, "nowhere");
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("nowhere"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Gemm"), std::string::npos) << msg;
}

TEST(OnnxImport, DataSizeMustMatchTheShape) {
  Context c;
  std::string msg;
  onnx::ModelProto m = mlp();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, 1000000000);  // declared huge, data small
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("'W'"), std::string::npos) << msg;
  m = mlp();
  m.mutable_graph()->mutable_initializer(1)->mutable_raw_data()->resize(5);
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("'b'"), std::string::npos) << msg;
  m = mlp();
  for (int i = 0; i < 4; ++i) m.mutable_graph()->mutable_initializer(0)->add_dims(1 << 30);  // overflows
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("'W'"), std::string::npos) << msg;
}

TEST(OnnxImport, HugeDeclaredInputDimsAreRefusedNotAllocated) {
  Context c;
  std::string msg;
  onnx::ModelProto m = mlp();
  auto *shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(1)->set_dim_value(int64_t(1) << 40);
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
}

TEST(OnnxImport, ExternalData) {
  Context c;
  Dir dir;
  onnx::ModelProto m = mlp();
  onnx::TensorProto &w = *m.mutable_graph()->mutable_initializer(0);
  std::string raw = w.raw_data();
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *loc = w.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  auto *off = w.add_external_data();
  off->set_key("offset");
  off->set_value("16");
  std::string path = dir.path + "/ext.onnx";
  write(path, m.SerializeAsString());
  nnrt_model *model = nullptr;
  // Missing file.
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &model), NNRT_ERR_CORRUPT);
  EXPECT_NE(std::string(nnrt_last_error()).find("weights.bin"), std::string::npos) << nnrt_last_error();
  // Present: the weights at offset 16.
  write(dir.path + "/weights.bin", std::string(16, '\0') + raw);
  ASSERT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &model), NNRT_OK) << nnrt_last_error();
  nnrt_model_release(model);
  // Too short for the shape.
  write(dir.path + "/weights.bin", std::string(16, '\0') + raw.substr(0, 20));
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &model), NNRT_ERR_CORRUPT);
  // From memory there is no folder.
  std::string bytes = m.SerializeAsString();
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), nullptr, &model), NNRT_ERR_UNSUPPORTED);
  // Outside the model's folder.
  for (const char *bad : {"../weights.bin", "/etc/passwd", "sub/../../weights.bin"}) {
    loc->set_value(bad);
    write(path, m.SerializeAsString());
    EXPECT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &model), NNRT_ERR_CORRUPT) << bad;
    EXPECT_NE(std::string(nnrt_last_error()).find("outside"), std::string::npos) << nnrt_last_error();
  }
}

TEST(OnnxImport, UnsupportedNamesNodeOpAndOpset) {
  Context c;
  std::string msg;
  onnx::ModelProto m = mlp();
  m.mutable_graph()->mutable_node(1)->set_op_type("Acosh");
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("'r'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Acosh"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
  m = mlp();
  m.mutable_opset_import(0)->set_version(99);
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("opset 99"), std::string::npos) << msg;
}

// x [N, 1, 3, 3] -> ConvTranspose(W [1, 2, 3, 3], strides 3x2) with the attributes a test adds.
onnx::ModelProto conv_transpose() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto &g = *m.mutable_graph();
  set_input(*g.add_input(), "x", {1, 3, 3});
  *g.add_initializer() = floats("W", {1, 2, 3, 3}, std::vector<float>(18, 0.5f));
  auto *strides = node(g, "ConvTranspose", {"x", "W"}, "y").add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::INTS);
  strides->add_ints(3);
  strides->add_ints(2);
  set_input(*g.add_output(), "y", {2, 9, 7});
  return m;
}

void add_ints(onnx::ModelProto &m, const char *name, std::vector<int64_t> v) {
  auto *a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

TEST(OnnxImport, ConvTransposeRefusesWhatConvolutionsCannotExpress) {
  Context c;
  std::string msg;
  EXPECT_EQ(import(c, conv_transpose(), &msg), NNRT_OK) << msg;
  // An output larger than the natural 9 x 7 by less than a stride: output_padding.
  onnx::ModelProto m = conv_transpose();
  add_ints(m, "output_shape", {10, 8});
  EXPECT_EQ(import(c, m, &msg), NNRT_OK) << msg;
  // output_padding as large as the stride: rows no convolution back from the output can skip.
  m = conv_transpose();
  add_ints(m, "output_padding", {3, 0});
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_SHAPE);
  EXPECT_NE(msg.find("output_padding (3)"), std::string::npos) << msg;
  // SAME_UPPER puts the odd row of an output_shape past the natural size before the first input.
  m = conv_transpose();
  add_ints(m, "output_shape", {10, 7});
  auto *a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("SAME_UPPER");
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("ConvTranspose"), std::string::npos) << msg;
  EXPECT_NE(msg.find("output_shape [10, 7]"), std::string::npos) << msg;
}

// x [N, 3, 2] -> LSTM(hidden 2, layout 1) -> Y_h [N, 1, 2], with the attributes and inputs a test adds.
onnx::ModelProto lstm(std::vector<std::string> inputs = {"x", "W", "R"}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  onnx::GraphProto &g = *m.mutable_graph();
  set_input(*g.add_input(), "x", {3, 2});
  *g.add_initializer() = floats("W", {1, 8, 2}, std::vector<float>(16, 0.1f));
  *g.add_initializer() = floats("R", {1, 8, 2}, std::vector<float>(16, 0.2f));
  *g.add_initializer() = floats("P", {1, 6}, {0, 0, 0, 0, 0, 0.5f});
  *g.add_initializer() = floats("h0", {1, 1, 2}, {0, 0});
  onnx::NodeProto &n = node(g, "LSTM", inputs, "");
  n.set_name("rnn");
  n.clear_output();
  n.add_output("");
  n.add_output("h");
  for (auto [name, value] : {std::pair{"hidden_size", 2}, std::pair{"layout", 1}}) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  set_input(*g.add_output(), "h", {1, 2});
  return m;
}

TEST(OnnxImport, LstmRefusesWhatNnrtsLayerDoesNotCompute) {
  Context c;
  std::string msg;
  EXPECT_EQ(import(c, lstm(), &msg), NNRT_OK) << msg;
  // A zero initial state is nnrt's; peepholes that are not zero are not.
  EXPECT_EQ(import(c, lstm({"x", "W", "R", "", "", "h0"}), &msg), NNRT_OK) << msg;
  EXPECT_EQ(import(c, lstm({"x", "W", "R", "", "", "", "", "P"}), &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("'rnn' (LSTM, opset 14): P is not all zeros"), std::string::npos) << msg;
  // Layout 0: time first, the batch in dim 1.
  onnx::ModelProto m = lstm();
  m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->set_i(0);
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("layout 0"), std::string::npos) << msg;
  // Reverse and bidirectional runs.
  m = lstm();
  auto *d = m.mutable_graph()->mutable_node(0)->add_attribute();
  d->set_name("direction");
  d->set_type(onnx::AttributeProto::STRING);
  d->set_s("bidirectional");
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("direction \"bidirectional\""), std::string::npos) << msg;
  // A weight of the wrong size.
  m = lstm();
  *m.mutable_graph()->mutable_initializer(0) = floats("W", {1, 8, 3}, std::vector<float>(24, 0.1f));
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("W is [1, 8, 3], expected [1, 8, 2]"), std::string::npos) << msg;
}

onnx::TensorProto int64s(const std::string &name, std::vector<int64_t> dims, std::vector<int64_t> v) {
  return tensor(name, onnx::TensorProto::INT64, dims, v);
}

// lstm()'s LSTM as torch.onnx.export writes a batch_first nn.LSTM: layout 0 between Transposes,
// the zero state ConstantOfShape(Concat([1], Unsqueeze(Gather(Shape(x), 0)), [2])), Y's directions
// dim squeezed, then the last step (Gather on the time axis): y [N, 2].
onnx::ModelProto torch_lstm(float h0_value = 0) {
  onnx::ModelProto m = lstm();
  onnx::GraphProto &g = *m.mutable_graph();
  g.clear_node();
  g.clear_output();
  *g.add_initializer() = int64s("zero", {}, {0});
  *g.add_initializer() = int64s("axes0", {1}, {0});
  *g.add_initializer() = int64s("axes1", {1}, {1});
  *g.add_initializer() = int64s("one", {1}, {1});
  *g.add_initializer() = int64s("hidden", {1}, {2});
  *g.add_initializer() = int64s("last", {}, {-1});
  node(g, "Shape", {"x"}, "shape");
  node(g, "Gather", {"shape", "zero"}, "batch");
  node(g, "Unsqueeze", {"batch", "axes0"}, "batch1");
  auto *axis = node(g, "Concat", {"one", "batch1", "hidden"}, "h0_shape").add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  auto *value = node(g, "ConstantOfShape", {"h0_shape"}, "h0").add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = floats("", {1}, {h0_value});
  auto *perm = node(g, "Transpose", {"x"}, "xt").add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {1, 0, 2}) perm->add_ints(p);
  onnx::NodeProto &l = node(g, "LSTM", {"xt", "W", "R", "", "", "h0", "h0"}, "Y");
  l.set_name("rnn");
  auto *hidden = l.add_attribute();
  hidden->set_name("hidden_size");
  hidden->set_type(onnx::AttributeProto::INT);
  hidden->set_i(2);
  node(g, "Squeeze", {"Y", "axes1"}, "ys");
  *node(g, "Transpose", {"ys"}, "yb").add_attribute() = *perm;
  auto *gather_axis = node(g, "Gather", {"yb", "last"}, "y").add_attribute();
  *gather_axis = *axis;
  gather_axis->set_i(1);
  set_input(*g.add_output(), "y", {2});
  return m;
}

TEST(OnnxImport, LstmAsTorchExportsIt) {
  Context c;
  auto import_model = [&c](const onnx::ModelProto &m, const char *options, nnrt_model **out) {
    std::string bytes = m.SerializeAsString();
    return nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), options, out);
  };
  nnrt_model *torch_form = nullptr, *layout1 = nullptr;
  ASSERT_EQ(import_model(torch_lstm(), nullptr, &torch_form), NNRT_OK) << nnrt_last_error();
  ASSERT_EQ(import_model(lstm(), nullptr, &layout1), NNRT_OK) << nnrt_last_error();
  std::vector<float> x = {0.5f, -1, 2, 0.25f, -0.5f, 1, 1.5f, 0, -2, 0.75f, 1, -1};
  EXPECT_EQ(predict(torch_form, c.ctx, x, {2, 3, 2}), predict(layout1, c.ctx, x, {2, 3, 2}));
  nnrt_model_release(torch_form);
  nnrt_model_release(layout1);

  std::string msg;
  // A state filled with another value is not nnrt's zero state.
  EXPECT_EQ(import(c, torch_lstm(1.0f), &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("'rnn' (LSTM, opset 14): initial_h is not all zeros"), std::string::npos) << msg;
  // Without the Transpose back and the Gather, the graph's output Y [T, N, H] has the batch in dim 1.
  onnx::ModelProto m = torch_lstm();
  for (int k : {2, 1}) {
    onnx::NodeProto &n = *m.mutable_graph()->mutable_node(m.graph().node_size() - k);
    n.set_op_type("Identity");
    n.clear_attribute();
    n.mutable_input()->RemoveLast();
    if (k == 2) n.add_input("ys");
  }
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("the batch in ONNX dim 1"), std::string::npos) << msg;
  // The batch's own ONNX dim cannot be sliced, and batch_axis needs a batch.
  m = torch_lstm();
  m.mutable_graph()->mutable_node(m.mutable_graph()->node_size() - 1)->mutable_attribute(0)->set_i(0);
  EXPECT_EQ(import(c, m, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("the batch dim"), std::string::npos) << msg;
  nnrt_model *out = nullptr;
  EXPECT_EQ(import_model(lstm(), R"({"batch": false, "batch_axis": 1})", &out), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnrt_last_error()).find("batch_axis"), std::string::npos) << nnrt_last_error();
  EXPECT_EQ(import_model(lstm(), R"({"batch_axis": 3})", &out), NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnrt_last_error()).find("options.batch_axis 3: input 'x' has 3 dims"), std::string::npos)
      << nnrt_last_error();
}

// Unsqueeze(x [N, 3] * Cast<float>(Div(Mul(6, 2), 5)), 1) + Sub(A [2, 1], B [3]): the arithmetic on constants that exported attention carries (head sizes, the
// scale) is folded at import, integers truncating, with numpy broadcasting.
// With six_is_batch, "six" is the batch size instead: Gather(Shape(x), 0).
onnx::ModelProto folded_arithmetic(bool six_is_batch = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto &g = *m.mutable_graph();
  set_input(*g.add_input(), "x", {3});
  if (six_is_batch) {
    *g.add_initializer() = int64s("zero", {}, {0});
    node(g, "Shape", {"x"}, "shape");
    node(g, "Gather", {"shape", "zero"}, "six");
  } else {
    *g.add_initializer() = int64s("six", {}, {6});
  }
  *g.add_initializer() = int64s("two", {1}, {2});
  *g.add_initializer() = int64s("four", {}, {5});
  *g.add_initializer() = floats("A", {2, 1}, {1.0f, 10.0f});
  *g.add_initializer() = floats("B", {3}, {0.5f, 0.25f, 2.0f});
  *g.add_initializer() = int64s("one", {1}, {1});
  node(g, "Mul", {"six", "two"}, "twelve");
  node(g, "Div", {"twelve", "four"}, "quotient");  // 12 / 5 = 2 (truncated)
  auto *to = node(g, "Cast", {"quotient"}, "factor").add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  node(g, "Sub", {"A", "B"}, "table");  // [[0.5, 0.75, -1], [9.5, 9.75, 8]]
  node(g, "Mul", {"x", "factor"}, "scaled");
  node(g, "Unsqueeze", {"scaled", "one"}, "scaled3");  // [N, 1, 3]
  node(g, "Add", {"scaled3", "table"}, "y0");         // [N, 2, 3]
  set_input(*g.add_output(), "y0", {2, 3});
  return m;
}

TEST(OnnxImport, ArithmeticOnConstantsIsFolded) {
  Context c;
  std::string bytes = folded_arithmetic().SerializeAsString();
  nnrt_model *m = nullptr;
  ASSERT_EQ(nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), nullptr, &m), NNRT_OK) << nnrt_last_error();
  const std::vector<float> got = predict(m, c.ctx, {1, 2, 3}, {1, 3});
  EXPECT_EQ(got, (std::vector<float>{2.5f, 4.75f, 5, 11.5f, 13.75f, 14}));
  nnrt_model_release(m);

  std::string msg;
  // Arithmetic on the batch size (known only at run time) is refused, naming it.
  onnx::ModelProto batch = folded_arithmetic(true);
  EXPECT_EQ(import(c, batch, &msg), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("holds the batch size"), std::string::npos) << msg;
  // Integer division by zero is a corrupt model.
  onnx::ModelProto zero = folded_arithmetic();
  *zero.mutable_graph()->mutable_initializer(2) = int64s("four", {}, {0});
  EXPECT_EQ(import(c, zero, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("division by zero"), std::string::npos) << msg;
  // Operands that do not broadcast are a corrupt model.
  onnx::ModelProto shapes = folded_arithmetic();
  *shapes.mutable_graph()->mutable_initializer(3) = floats("A", {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(import(c, shapes, &msg), NNRT_ERR_CORRUPT);
  EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;
}

// The statuses that reach a user through the path form of import and through export.
TEST(OnnxImport, StatusesThroughThePathAndExport) {
  Context c;
  char dir[] = "/tmp/nnrt_onnx_statuses_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/model.onnx";
  auto write = [&path](const onnx::ModelProto &m) { std::ofstream(path, std::ios::binary) << m.SerializeAsString(); };
  nnrt_model *out = nullptr;
  onnx::ModelProto m = mlp();
  m.mutable_graph()->mutable_node(1)->set_op_type("Acosh");
  write(m);
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &out), NNRT_ERR_UNSUPPORTED) << nnrt_last_error();
  // A first weight for 5 features where the input has 4.
  m = mlp();
  *m.mutable_graph()->mutable_initializer(0) = floats("W", {3, 5}, std::vector<float>(15, 0.1f));
  write(m);
  EXPECT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &out), NNRT_ERR_SHAPE) << nnrt_last_error();
  EXPECT_EQ(out, nullptr);
  // Export: a folder that does not exist, and an lstm over examples [B, T, F], which has no ONNX
  // form here.
  write(mlp());
  ASSERT_EQ(nnrt_model_import_onnx(c.ctx, path.c_str(), nullptr, &out), NNRT_OK) << nnrt_last_error();
  EXPECT_EQ(nnrt_model_export_onnx(out, "/nonexistent/folder/model.onnx"), NNRT_ERR_IO) << nnrt_last_error();
  nnrt_model_release(out);
  out = nullptr;
  ASSERT_EQ(nnrt_model_create(c.ctx, R"({"input": [2, 5, 3], "layers": [
      {"type": "lstm", "units": 2}, {"type": "flatten"}, {"type": "output", "units": 2, "loss": "nll"}]})", &out), NNRT_OK)
      << nnrt_last_error();
  EXPECT_EQ(nnrt_model_export_onnx(out, (std::string(dir) + "/lstm.onnx").c_str()), NNRT_ERR_UNSUPPORTED) << nnrt_last_error();
  nnrt_model_release(out);
  std::remove(path.c_str());
  std::remove((std::string(dir) + "/lstm.onnx").c_str());
  rmdir(dir);
}

// Run alone (meson test onnx_no_converter) with NNRT_BACKEND_PATH at a folder without
// libnnrt-onnx.so: import and export refuse with NNRT_ERR_UNSUPPORTED, naming the plugin and the
// folders searched, and nnrt_context_describe says why it is not loaded.
TEST(NoConverter, ImportAndExportNameWhatIsMissing) {
  Context c;
  std::string bytes = mlp().SerializeAsString();
  nnrt_model *out = nullptr;
  EXPECT_EQ(nnrt_model_import_onnx_memory(c.ctx, bytes.data(), bytes.size(), nullptr, &out), NNRT_ERR_UNSUPPORTED);
  EXPECT_EQ(out, nullptr);
  std::string message = nnrt_last_error();
  EXPECT_NE(message.find("libnnrt-onnx.so"), std::string::npos) << message;
  EXPECT_NE(message.find(std::getenv("NNRT_BACKEND_PATH")), std::string::npos) << message;

  nnrt_model *m = nullptr;
  ASSERT_EQ(nnrt_model_create(c.ctx, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 2}]}", &m), NNRT_OK)
      << nnrt_last_error();
  Dir d;
  EXPECT_EQ(nnrt_model_export_onnx(m, (d.path + "/m.onnx").c_str()), NNRT_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(nnrt_last_error()).find("libnnrt-onnx.so"), std::string::npos) << nnrt_last_error();
  EXPECT_NE(access((d.path + "/m.onnx").c_str(), F_OK), 0);
  nnrt_model_release(m);

  size_t len = 0;
  ASSERT_EQ(nnrt_context_describe(c.ctx, nullptr, 0, &len), NNRT_OK);
  std::string text(len, '\0');
  ASSERT_EQ(nnrt_context_describe(c.ctx, text.data(), len + 1, &len), NNRT_OK);
  EXPECT_NE(text.find("\"onnx\":{\"error\":\"no libnnrt-onnx.so"), std::string::npos) << text;
}

}  // namespace
