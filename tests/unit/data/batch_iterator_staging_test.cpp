// BatchIterator on a device backend with staged uploads: the fake GPU plugin (tests/plugins), whose
// copies from page-locked memory run late and which counts every use of device memory before its
// copy was waited for, and every page-locked buffer rewritten before its copy ran.
//
// Run twice by meson: as is, and with NNRT_FAKEGPU_ABI=1.0 (a plugin table without the event
// functions), where the iterator must take the synchronous path and give the same batches.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "backend/ops.h"
#include "backend/staged_upload.h"
#include "data/dataset.h"
#include "data_test_util.h"
#include "nnrt/nnrt.h"

namespace nnrt::data {
namespace {

using test::failure_of;

// The fake GPU's test hooks, found in the plugin the context loaded.
struct FakeGpu {
  void (*report)(long *copies, long *waits, long *violations, const char **calls) = nullptr;
  void (*reset)() = nullptr;
  long (*pinned_in_use)() = nullptr;
  void (*fail)(int what, long k) = nullptr;
  void *lib = nullptr;

  // Call once the plugin is loaded (after the first context on it).
  void find() {
    lib = dlopen(FAKE_GPU_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return;
    report = reinterpret_cast<decltype(report)>(dlsym(lib, "nnrt_fakegpu_staging_report"));
    reset = reinterpret_cast<decltype(reset)>(dlsym(lib, "nnrt_fakegpu_staging_reset"));
    pinned_in_use = reinterpret_cast<decltype(pinned_in_use)>(dlsym(lib, "nnrt_fakegpu_pinned_in_use"));
    fail = reinterpret_cast<decltype(fail)>(dlsym(lib, "nnrt_fakegpu_fail"));
  }
  ~FakeGpu() {
    if (lib) dlclose(lib);
  }
  long copies() const { return get().copies; }
  long waits() const { return get().waits; }
  long violations() const { return get().violations; }
  std::string calls() const { return get().calls; }

 private:
  struct Report {
    long copies = 0, waits = 0, violations = 0;
    std::string calls;
  };
  Report get() const {
    Report r;
    const char *c = "";
    report(&r.copies, &r.waits, &r.violations, &c);
    r.calls = c;
    return r;
  }
};

std::shared_ptr<Context> context(const char *backend) {
  ContextOptions o;
  o.backend = backend;
  o.threads = 2;
  return Context::create(o);
}

// n examples of 3 bytes; example i holds (i, 2i, 3i) mod 256 and has class i % 7 (or target i / 2).
std::shared_ptr<Dataset> numbered(int64_t n, bool classes) {
  DatasetParts p;
  p.size = n;
  p.feature_type = FeatureType::U8;
  p.example_shape = Shape{3};
  p.class_labels = classes;
  p.target_shape = Shape{1};
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 1; k <= 3; ++k) p.features.push_back(static_cast<unsigned char>(i * k));
    if (classes) p.classes.push_back(i % 7);
    else p.targets.push_back(static_cast<float>(i) / 2);
  }
  return Dataset::from_parts(std::move(p));
}

// Every batch of an epoch as host bytes (x then y).
std::vector<std::vector<unsigned char>> epoch_bytes(BatchIterator &it) {
  std::vector<std::vector<unsigned char>> out;
  Batch b;
  while (it.next(b)) {
    std::vector<unsigned char> v(b.x.nbytes() + b.y.nbytes());
    b.x.copy_to_host(v.data(), b.x.nbytes());
    b.y.copy_to_host(v.data() + b.x.nbytes(), b.y.nbytes());
    EXPECT_EQ(b.x.dim(0), b.n);
    out.push_back(std::move(v));
  }
  return out;
}

class StagedBatches : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = context("fakegpu");
    host_ = context("reference");
    fake_.find();
    ASSERT_NE(fake_.lib, nullptr) << "the fake GPU plugin is not loaded from " << FAKE_GPU_PLUGIN;
    ASSERT_NE(fake_.report, nullptr);
    fake_.reset();
  }
  // Staged uploads are offered unless the plugin plays one built before the event functions.
  static bool staged() { return std::getenv("NNRT_FAKEGPU_ABI") == nullptr; }

  std::shared_ptr<Context> gpu_, host_;
  FakeGpu fake_;
};

TEST_F(StagedBatches, OfferedOnlyByATableWithEvents) {
  EXPECT_EQ(backend::StagedUpload::available(*gpu_->device()), staged());
  EXPECT_FALSE(backend::StagedUpload::available(*host_->device()));  // host memory: nothing to stage
}

TEST_F(StagedBatches, SameBatchesAsTheHostWithEveryPrefetch) {
  for (bool classes : {true, false}) {
    auto data = numbered(53, classes);
    for (int prefetch : {0, 1, 3}) {
      for (nnrt_dtype dtype : {NNRT_DTYPE_F32, NNRT_DTYPE_F16}) {
        fake_.reset();
        BatchIterator on_gpu(data, gpu_, 8, true, 42, prefetch, dtype);
        BatchIterator on_host(data, host_, 8, true, 42, prefetch, dtype);
        auto got = epoch_bytes(on_gpu);
        EXPECT_EQ(got, epoch_bytes(on_host)) << "prefetch " << prefetch;
        EXPECT_EQ(got.size(), 7u);
        EXPECT_EQ(fake_.violations(), 0) << fake_.calls();
        // One deferred copy per batch, waited for by the context's stream, and the copy stream
        // waiting for the slot's release: two waits per batch.
        EXPECT_EQ(fake_.copies(), staged() ? 7 : 0);
        EXPECT_EQ(fake_.waits(), staged() ? 14 : 0);
      }
    }
  }
}

// Without a prefetch thread the calls are in a fixed order. Per batch: S the host waits until the
// slot's last copy ran (before rewriting its page-locked buffer); W the copy stream waits for the
// slot's release; C the copy; R its event; W the context's stream waits for it; D D the arrays cut
// out of the slot; R the release. The first batch also records the release of a freshly
// allocated device buffer (R after S).
TEST_F(StagedBatches, CallsInOrderWithoutPrefetch) {
  if (!staged()) GTEST_SKIP() << "the plugin's table has no events: batches take the synchronous path";
  BatchIterator it(numbered(20, true), gpu_, 8, false, 0, 0);
  auto batches = epoch_bytes(it);
  EXPECT_EQ(batches.size(), 3u);
  EXPECT_EQ(fake_.calls(), "SRWCRWDDR" "SWCRWDDR" "SWCRWDDR");
  EXPECT_EQ(fake_.violations(), 0);
}

// The checks of the fake GPU fire when the host does not wait: the test of the tests.
TEST_F(StagedBatches, TheFakeGpuSeesAReadBeforeTheWait) {
  if (!staged()) GTEST_SKIP() << "the plugin's table has no events";
  backend::Device &d = *gpu_->device();
  const nnrt_backend_v1 &t = d.table();
  nnrt_stream *copy = nullptr;
  void *pinned = nullptr;
  ASSERT_EQ(t.stream_create(d.instance(), &copy), NNRT_OK);
  ASSERT_EQ(t.host_alloc(d.instance(), 64, &pinned), NNRT_OK);
  Array dst = Array::allocate(gpu_->device(), NNRT_DTYPE_U8, Shape{64});
  Array other = Array::allocate(gpu_->device(), NNRT_DTYPE_U8, Shape{64});
  std::memset(pinned, 7, 64);
  ASSERT_EQ(t.memcpy_async(d.instance(), dst.data(), pinned, 64, NNRT_COPY_HOST_TO_DEVICE, copy), NNRT_OK);
  std::memset(pinned, 9, 64);                  // rewritten before the copy ran
  d.copy_device(other.data(), dst.data(), 64);  // read on the context's stream without a wait
  EXPECT_EQ(fake_.violations(), 1);
  ASSERT_EQ(t.stream_synchronize(d.instance(), copy), NNRT_OK);
  EXPECT_EQ(fake_.violations(), 2);
  t.stream_destroy(d.instance(), copy);
  t.host_free(d.instance(), pinned);
}

// The plugin ABI's promise for device memory (nnrt_backend.h, mem_alloc): memory that cannot be had
// is NNRT_ERR_OUT_OF_MEMORY, which the host passes on with that status.
TEST_F(StagedBatches, DeviceMemoryThatCannotBeHadIsOutOfMemory) {
  backend::Device &d = *gpu_->device();
  void *p = nullptr;
  EXPECT_EQ(d.table().mem_alloc(d.instance(), SIZE_MAX - 4096, &p), NNRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(p, nullptr);
  auto f = failure_of([&] { Array::allocate(gpu_->device(), NNRT_DTYPE_U8, Shape{int64_t{1} << 60}); });
  EXPECT_EQ(f.status, NNRT_ERR_OUT_OF_MEMORY) << f.message;
}

TEST_F(StagedBatches, ACopyFailureReachesNextAndLeavesNothingBehind) {
  auto data = numbered(40, true);
  for (int prefetch : {0, 2}) {
    {
      BatchIterator it(data, gpu_, 5, false, 0, prefetch);
      fake_.fail(2 /* copy */, 3);
      Batch b;
      auto f = failure_of([&] {
        while (it.next(b)) {
        }
      });
      fake_.fail(2, 0);
      EXPECT_EQ(f.status, NNRT_ERR_BACKEND);
      EXPECT_NE(f.message.find("injected failure of a device copy"), std::string::npos) << f.message;
    }
    EXPECT_EQ(fake_.pinned_in_use(), 0);
    EXPECT_EQ(gpu_->device()->memory().stats().allocated_bytes, 0u);
  }
  EXPECT_EQ(fake_.violations(), 0);
}

// The trainer's epochs go through the iterator: training on the fake GPU (its add and mul, the rest
// on the reference backend) gives the losses of training on the host, bit for bit.
std::vector<double> train_losses(const char *context_json) {
  std::vector<double> losses;
  nnrt_context *ctx = nullptr;
  nnrt_model *model = nullptr;
  nnrt_trainer *trainer = nullptr;
  nnrt_array *x = nullptr, *y = nullptr;
  nnrt_dataset *data = nullptr;
  EXPECT_EQ(nnrt_context_create(context_json, &ctx), NNRT_OK) << nnrt_last_error();
  const char *mlp =
      "{\"input\": [3], \"seed\": 5, \"layers\": [{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"},"
      " {\"type\": \"output\", \"units\": 7, \"activation\": \"softmax\", \"loss\": \"cross_entropy\"}]}";
  EXPECT_EQ(nnrt_model_create(ctx, mlp, &model), NNRT_OK) << nnrt_last_error();
  EXPECT_EQ(nnrt_trainer_create(model, "{\"optimizer\": {\"type\": \"adam\"}, \"batch_size\": 6, \"seed\": 9}",
                                &trainer),
            NNRT_OK)
      << nnrt_last_error();
  std::vector<float> xs;
  std::vector<int64_t> ys;
  for (int i = 0; i < 45; ++i) {
    for (int k = 1; k <= 3; ++k) xs.push_back(static_cast<float>((i * k) % 11) / 11);
    ys.push_back(i % 7);
  }
  int64_t xshape[2] = {45, 3}, yshape[1] = {45};
  EXPECT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xshape, xs.data(), xs.size() * 4, &x), NNRT_OK);
  EXPECT_EQ(nnrt_array_from_host(ctx, NNRT_DTYPE_I64, 1, yshape, ys.data(), ys.size() * 8, &y), NNRT_OK);
  EXPECT_EQ(nnrt_dataset_from_arrays(ctx, x, y, &data), NNRT_OK) << nnrt_last_error();
  nnrt_trainer_set_progress(
      trainer,
      [](const nnrt_progress *p, void *user) {
        if (!p->epoch_end) static_cast<std::vector<double> *>(user)->push_back(p->loss);
        return 0;
      },
      &losses);
  EXPECT_EQ(nnrt_trainer_fit(trainer, data, nullptr, 3), NNRT_OK) << nnrt_last_error();
  nnrt_dataset_release(data);
  nnrt_array_release(x);
  nnrt_array_release(y);
  nnrt_trainer_release(trainer);
  nnrt_model_release(model);
  nnrt_context_release(ctx);
  return losses;
}

TEST_F(StagedBatches, TrainingGivesTheHostsLosses) {
  auto on_gpu = train_losses("{\"backend\": \"fakegpu\"}");
  EXPECT_EQ(on_gpu.size(), 24u);  // 3 epochs of 8 batches
  EXPECT_EQ(on_gpu, train_losses("{\"backend\": \"reference\"}"));
  EXPECT_EQ(fake_.violations(), 0) << fake_.calls();
  EXPECT_EQ(fake_.copies(), staged() ? 24 : 0);
}

}  // namespace
}  // namespace nnrt::data
