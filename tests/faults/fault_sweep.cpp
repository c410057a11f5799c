// Fault sweeps over the public API, in the manner of sqlite's test_malloc and curl's "runtests -t":
// each call below runs again and again with its k-th allocation (or backend operation) failing, for
// k = 1, 2, ... until a run in which the fault never fires. Every run must return the status the
// fault calls for (or succeed, where nnrt recovered), leave its out-parameters untouched on failure
// (they hold a sentinel pattern before each run and must still hold it), crash nowhere and leak
// nothing (LeakSanitizer, in the sanitizer build), and the objects involved must work afterwards:
// the same call without a fault succeeds.
//
//   fault_sweep oom [context options]       the k-th allocation of array memory fails (the memory
//                                           caches, host and device). Needs a build with
//                                           -Dfault_injection=true (else exits 77).
//
// operator new is not made to fail: nlohmann::json's destructor allocates (3.11's destroy() reserves
// a stack to free nested values without recursion), so a failed new there would terminate inside a
// noexcept destructor whatever nnrt did.
//   fault_sweep backend <fake GPU plugin>   the fake GPU plugin fails its k-th op run, allocation or
//                                           copy: NNRT_ERR_BACKEND with the plugin's message.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/fault_injection.h"
#include "nnrt/nnrt.h"

namespace {

int failures = 0;

void complain(const std::string &what) {
  ++failures;
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

// How a fault is armed and whether it fired.
struct Injector {
  std::function<void(long k)> arm;  // k = 0 disarms
  std::function<bool()> fired;
  nnrt_status expected;
  const char *message;  // the expected message contains it
};

// An out-parameter of the call under test: where it is and how large. Before each faulty run it is
// filled with a sentinel pattern, which a failing call must leave as it was.
struct OutParam {
  void *at;
  size_t size;
};
const unsigned char kSentinel = 0xa5;

// One call under test: `setup` makes what it needs (not under faults), `call` is the call (under
// the fault), `teardown` releases what both made (out-parameters left NULL are skipped).
struct Case {
  const char *name;
  std::function<void()> setup;
  std::function<nnrt_status()> call;
  std::function<void()> teardown;
  std::vector<OutParam> outs;
};

template <class T>
OutParam out_param(T *p) {
  return {p, sizeof *p};
}

void fill_sentinel(const std::vector<OutParam> &outs) {
  for (const OutParam &o : outs) std::memset(o.at, kSentinel, o.size);
}

// Whether every byte of every out-parameter still holds the sentinel.
bool sentinels_intact(const std::vector<OutParam> &outs) {
  for (const OutParam &o : outs)
    for (size_t i = 0; i < o.size; ++i)
      if (static_cast<const unsigned char *>(o.at)[i] != kSentinel) return false;
  return true;
}

// Back to zero (NULL pointers), so that teardown releases only what a call made.
void clear_out_params(const std::vector<OutParam> &outs) {
  for (const OutParam &o : outs) std::memset(o.at, 0, o.size);
}

struct Fixture {
  std::string options, dir;
  nnrt_context *ctx = nullptr;
  nnrt_model *model = nullptr;
  nnrt_trainer *trainer = nullptr;
  nnrt_dataset *data = nullptr;
  nnrt_array *x = nullptr, *y = nullptr;
};

const char *kMlp =
    "{\"input\": [4], \"seed\": 3, \"layers\": [{\"type\": \"dense\", \"units\": 6, \"activation\": \"relu\"},"
    " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}";
const char *kConv =
    "{\"input\": [1, 6, 6], \"seed\": 3, \"layers\": [{\"type\": \"conv2d\", \"filters\": 2, \"kernel\": 3,"
    " \"activation\": \"relu\"}, {\"type\": \"maxpool2d\", \"kernel\": 2}, {\"type\": \"batchnorm\"},"
    " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}";

// A token model for generation: causal attention, so that the sweep covers the key/value cache.
const char *kTokens =
    "{\"input\": [6], \"seed\": 3, \"layers\": [{\"type\": \"embedding\", \"vocab\": 8, \"units\": 8},"
    " {\"type\": \"position_embedding\"}, {\"type\": \"multi_head_attention\", \"heads\": 2, \"causal\": true},"
    " {\"type\": \"output\", \"units\": 8, \"loss\": \"nll\", \"flatten\": false}]}";

const char *kTrainerOptions = "{\"batch_size\": 8, \"prefetch\": 2, \"optimizer\": {\"type\": \"adam\"}}";

void must(nnrt_status s, const char *what) {
  if (s != NNRT_OK) {
    std::fprintf(stderr, "setup failed: %s: %s\n", what, nnrt_last_error());
    std::exit(1);
  }
}

std::vector<Case> cases(Fixture &f) {
  static float xv[16 * 4];
  static int32_t yv[16];
  for (int i = 0; i < 16; ++i) {
    yv[i] = i % 2;
    for (int j = 0; j < 4; ++j) xv[i * 4 + j] = (i % 2 ? 1.f : -1.f) + 0.1f * float((i * 7 + j * 3) % 5);
  }
  auto with_data = [&f] {
    int64_t xs[2] = {16, 4}, ys[1] = {16};
    must(nnrt_array_from_host(f.ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &f.x), "x");
    must(nnrt_array_from_host(f.ctx, NNRT_DTYPE_I32, 1, ys, yv, sizeof yv, &f.y), "y");
  };
  auto with_model = [&f, with_data] {
    with_data();
    must(nnrt_model_create(f.ctx, kMlp, &f.model), "model");
  };
  auto with_trainer = [&f, with_model] {
    with_model();
    must(nnrt_trainer_create(f.model, kTrainerOptions, &f.trainer), "trainer");
    must(nnrt_dataset_from_arrays(f.ctx, f.x, f.y, &f.data), "dataset");
  };
  auto with_token_model = [&f] { must(nnrt_model_create(f.ctx, kTokens, &f.model), "token model"); };
  auto release = [&f] {
    nnrt_trainer_release(f.trainer);
    nnrt_model_release(f.model);
    nnrt_dataset_release(f.data);
    nnrt_array_release(f.x);
    nnrt_array_release(f.y);
    f.trainer = nullptr;
    f.model = nullptr;
    f.data = nullptr;
    f.x = f.y = nullptr;
  };
  std::string saved = f.dir + "/saved.safetensors", csv = f.dir + "/data.csv";
  std::string onnx = f.dir + "/model.onnx", exported = f.dir + "/exported.onnx";
  // What the calls make (their out-parameters); released by drop_made.
  static nnrt_array *out = nullptr, *labels = nullptr, *into = nullptr;
  static nnrt_model *made = nullptr;
  static nnrt_trainer *made_trainer = nullptr;
  static nnrt_evaluation *eval = nullptr;
  static nnrt_context *made_ctx = nullptr;
  static nnrt_dataset *made_data = nullptr;
  static double loss = 0;
  static int64_t generated[4];
  static size_t n_generated = 0;
  static float host_copy[16 * 4];
  static std::string onnx_bytes;
  auto drop_made = [release] {
    nnrt_array_release(out);
    nnrt_array_release(labels);
    nnrt_array_release(into);
    into = nullptr;
    nnrt_model_release(made);
    nnrt_trainer_release(made_trainer);
    nnrt_evaluation_release(eval);
    nnrt_context_release(made_ctx);
    nnrt_dataset_release(made_data);
    out = labels = nullptr;
    made = nullptr;
    made_trainer = nullptr;
    eval = nullptr;
    made_ctx = nullptr;
    made_data = nullptr;
    release();
  };
  auto with_onnx_bytes = [onnx] {
    std::ifstream file(onnx, std::ios::binary);
    onnx_bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (onnx_bytes.empty()) {
      std::fprintf(stderr, "setup failed: cannot read %s\n", onnx.c_str());
      std::exit(1);
    }
  };
  auto nothing = [] {};
  return {
      {"nnrt_context_create", nothing,
       [&f] { return nnrt_context_create(f.options.empty() ? nullptr : f.options.c_str(), &made_ctx); }, drop_made,
       {out_param(&made_ctx)}},
      {"nnrt_array_from_host", nothing,
       [&f] {
         int64_t s[2] = {16, 4};
         return nnrt_array_from_host(f.ctx, NNRT_DTYPE_F32, 2, s, xv, sizeof xv, &out);
       },
       drop_made, {out_param(&out)}},
      // The out-parameter is the host buffer: a failed copy may have written part of it, which the
      // header allows (it promises the elements only on success), so it is not checked.
      {"nnrt_array_to_host", with_data, [&f] { return nnrt_array_to_host(f.x, host_copy, sizeof host_copy); },
       drop_made, {}},
      {"nnrt_op matmul", with_data,
       [&f] {
         const nnrt_array *in[2] = {f.x, f.x};
         return nnrt_op(f.ctx, "matmul", in, 2, "{\"transpose_b\": true}", &out, 1);
       },
       drop_made, {out_param(&out)}},
      {"nnrt_op add", with_data,
       [&f] {
         const nnrt_array *in[2] = {f.x, f.x};
         return nnrt_op(f.ctx, "add", in, 2, nullptr, &out, 1);
       },
       drop_made, {out_param(&out)}},
      {"nnrt_op mean", with_data,
       [&f] {
         const nnrt_array *in[1] = {f.y};
         return nnrt_op(f.ctx, "mean", in, 1, "{\"axes\": [0]}", &out, 1);
       },
       drop_made, {out_param(&out)}},
      {"nnrt_model_create", nothing, [&f] { return nnrt_model_create(f.ctx, kConv, &made); }, drop_made,
       {out_param(&made)}},
      {"nnrt_model_predict", with_model, [&f] { return nnrt_model_predict(f.model, f.x, &out); }, drop_made,
       {out_param(&out)}},
      // Into an output made beforehand (its contents are unspecified after a failure).
      {"nnrt_model_predict_into",
       [&f, with_model] {
         with_model();
         int64_t shape[NNRT_MAX_DIMS];
         int32_t ndim = 0;
         must(nnrt_model_output_shape(f.model, 16, &ndim, shape), "output shape");
         must(nnrt_array_create(f.ctx, NNRT_DTYPE_F32, ndim, shape, &into), "output");
       },
       [&f] { return nnrt_model_predict_into(f.model, f.x, into, nullptr); }, drop_made, {}},
      {"nnrt_model_predict_many", with_model,
       [&f] {
         const nnrt_array *in[1] = {f.x};
         return nnrt_model_predict_many(f.model, in, 1, nullptr, &out, 1);
       },
       drop_made, {out_param(&out)}},
      {"nnrt_model_share", with_model, [&f] { return nnrt_model_share(f.model, &made); }, drop_made,
       {out_param(&made)}},
      // Calibration (the float model's passes), the copy's build, its weights rounded and written.
      {"nnrt_model_quantize", with_trainer, [&f] { return nnrt_model_quantize(f.model, f.data, nullptr, &made); },
       drop_made, {out_param(&made)}},
      // Sampled (temperature 1): the draws run too.
      {"nnrt_model_generate", with_token_model,
       [&f] {
         const int64_t prompt[2] = {1, 2};
         return nnrt_model_generate(f.model, prompt, 2, "{\"temperature\": 1, \"seed\": 5}", generated, 4, &n_generated,
                                    nullptr, nullptr);
       },
       drop_made, {out_param(&generated), out_param(&n_generated)}},
      {"nnrt_trainer_create", with_model,
       [&f] { return nnrt_trainer_create(f.model, "{\"optimizer\": {\"type\": \"adam\"}}", &made_trainer); },
       drop_made, {out_param(&made_trainer)}},
      {"nnrt_trainer_step", with_trainer, [&f] { return nnrt_trainer_step(f.trainer, f.x, f.y, &loss); }, drop_made,
       {out_param(&loss)}},
      {"nnrt_trainer_fit", with_trainer, [&f] { return nnrt_trainer_fit(f.trainer, f.data, f.data, 1); }, drop_made, {}},
      {"nnrt_model_evaluate", with_trainer, [&f] { return nnrt_model_evaluate(f.model, f.data, &eval); }, drop_made,
       {out_param(&eval)}},
      {"nnrt_dataset_from_arrays", with_data, [&f] { return nnrt_dataset_from_arrays(f.ctx, f.x, f.y, &made_data); },
       drop_made, {out_param(&made_data)}},
      {"nnrt_dataset_load", nothing,
       [&f, csv] {
         std::string spec = "{\"format\": \"csv\", \"path\": \"" + csv + "\"}";
         return nnrt_dataset_load(f.ctx, spec.c_str(), &made_data);
       },
       drop_made, {out_param(&made_data)}},
      {"nnrt_dataset_examples", with_trainer,
       [&f] { return nnrt_dataset_examples(f.ctx, f.data, 3, 9, &out, &labels); }, drop_made,
       {out_param(&out), out_param(&labels)}},
      {"nnrt_model_save", with_model, [&f, saved] { return nnrt_model_save(f.model, saved.c_str()); }, drop_made, {}},
      {"nnrt_trainer_save", with_trainer, [&f, saved] { return nnrt_trainer_save(f.trainer, saved.c_str()); },
       drop_made, {}},
      {"nnrt_model_load", nothing, [&f, saved] { return nnrt_model_load(f.ctx, saved.c_str(), &made); }, drop_made,
       {out_param(&made)}},
      {"nnrt_trainer_restore", with_trainer,
       [&f, saved] { return nnrt_trainer_restore(f.trainer, saved.c_str()); }, drop_made, {}},
      {"nnrt_model_export_onnx", with_model, [&f, exported] { return nnrt_model_export_onnx(f.model, exported.c_str()); },
       drop_made, {}},
      {"nnrt_model_import_onnx", nothing,
       [&f, onnx] { return nnrt_model_import_onnx(f.ctx, onnx.c_str(), nullptr, &made); }, drop_made,
       {out_param(&made)}},
      {"nnrt_model_import_onnx_memory", with_onnx_bytes,
       [&f] { return nnrt_model_import_onnx_memory(f.ctx, onnx_bytes.data(), onnx_bytes.size(), nullptr, &made); },
       drop_made, {out_param(&made)}},
  };
}

// Runs every case with the k-th fault for every k until one run sees no fault. Returns the faults
// injected.
long sweep(Fixture &f, const Injector &inj, long max_k) {
  long injected = 0;
  for (Case &c : cases(f)) {
    long k = 1, failed = 0;
    for (;; ++k) {
      c.setup();
      fill_sentinel(c.outs);
      inj.arm(k);
      nnrt_status s = c.call();
      bool fired = inj.fired();
      inj.arm(0);
      std::string where = std::string(c.name) + " with fault " + std::to_string(k);
      if (!fired) {
        if (s != NNRT_OK) {
          complain(where + " (never fired): " + nnrt_status_name(s) + ": " + nnrt_last_error());
          clear_out_params(c.outs);
        }
        c.teardown();
        break;
      }
      ++injected;
      if (s == inj.expected) ++failed;
      if (s != NNRT_OK && s != inj.expected) {
        complain(where + ": " + nnrt_status_name(s) + " (expected " + nnrt_status_name(inj.expected) + "): " +
                 nnrt_last_error());
      } else if (s != NNRT_OK && !std::strstr(nnrt_last_error(), inj.message)) {
        complain(where + ": the message \"" + nnrt_last_error() + "\" lacks \"" + inj.message + "\"");
      }
      if (s != NNRT_OK && !sentinels_intact(c.outs)) {
        complain(where + ": " + nnrt_status_name(s) + ", but an out-parameter was written (nnrt.h: left untouched on "
                 "failure)");
      }
      if (s != NNRT_OK) clear_out_params(c.outs);  // the sentinel is no object to release
      // Usable afterwards: the same call on the same objects, without a fault.
      if (s != NNRT_OK) {
        nnrt_status again = c.call();
        if (again != NNRT_OK) complain(where + ", then without: " + nnrt_status_name(again) + ": " + nnrt_last_error());
      }
      c.teardown();
      if (k >= max_k) {
        complain(std::string(c.name) + ": still failing after " + std::to_string(max_k) + " faults");
        break;
      }
    }
    std::printf("%-29s %5ld runs, %5ld faults injected, %5ld failed with %s\n", c.name, k, k - 1, failed,
                nnrt_status_name(inj.expected));
  }
  return injected;
}

// A checkpoint (model and adam state) for the load and restore cases, and the model as ONNX for
// the import case.
void write_checkpoint(Fixture &f) {
  nnrt_model *m = nullptr;
  nnrt_trainer *t = nullptr;
  must(nnrt_model_create(f.ctx, kMlp, &m), "model");
  must(nnrt_trainer_create(m, kTrainerOptions, &t), "trainer");
  must(nnrt_trainer_save(t, (f.dir + "/saved.safetensors").c_str()), "save");
  must(nnrt_model_export_onnx(m, (f.dir + "/model.onnx").c_str()), "export");
  nnrt_trainer_release(t);
  nnrt_model_release(m);
}

// The fake GPU plugin's fault switch, found in the copy of the plugin that nnrt loaded.
struct FakeGpuFaults {
  void (*fail)(int what, long k) = nullptr;
  int (*fired)(void) = nullptr;
};

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fault_sweep oom [context options] | backend <fake GPU plugin path>\n");
    return 2;
  }
  std::string mode = argv[1];
  Fixture f;
  char dir[] = "/tmp/nnrt_faults_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  f.dir = dir;
  {
    FILE *csv = std::fopen((f.dir + "/data.csv").c_str(), "w");
    for (int i = 0; i < 12; ++i) std::fprintf(csv, "%d,%d.5,%d,1,2\n", i % 2, i, -i);
    std::fclose(csv);
  }
  long total = 0;
  if (mode == "oom") {
#ifndef NNRT_FAULT_INJECTION
    std::printf("skipped: built without -Dfault_injection=true, so allocations cannot be made to fail\n");
    return 77;
#else
    f.options = argc > 2 ? argv[2] : "";
    must(nnrt_context_create(f.options.empty() ? nullptr : f.options.c_str(), &f.ctx), "context");
    write_checkpoint(f);
    Injector inj{[](long k) { nnrt::fault::fail_allocation(k); }, [] { return nnrt::fault::fault_fired(); },
                 NNRT_ERR_OUT_OF_MEMORY, "out of memory"};
    total = sweep(f, inj, 200000);
#endif
  } else if (mode == "backend" && argc > 2) {
    setenv("NNRT_FAKEGPU_DEVICES", "1", 1);
    // No caching: every array then asks the device for memory, so that allocations can fail.
    f.options = "{\"backend\": \"fakegpu\", \"cache\": {\"max_cached_bytes\": 0}}";
    must(nnrt_context_create(f.options.c_str(), &f.ctx), "fake GPU context");
    void *plugin = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
    FakeGpuFaults fg;
    if (plugin) {
      fg.fail = reinterpret_cast<void (*)(int, long)>(dlsym(plugin, "nnrt_fakegpu_fail"));
      fg.fired = reinterpret_cast<int (*)(void)>(dlsym(plugin, "nnrt_fakegpu_fault_fired"));
    }
    if (!fg.fail || !fg.fired) {
      std::fprintf(stderr, "the fake GPU plugin %s is not loaded or has no fault switch\n", argv[2]);
      return 1;
    }
    write_checkpoint(f);
    const char *names[3] = {"op run", "allocation", "copy"};
    for (int what = 0; what < 3; ++what) {
      std::printf("-- the fake GPU fails its k-th %s\n", names[what]);
      Injector inj{[&fg, what](long k) { fg.fail(what, k); }, [&fg] { return fg.fired() != 0; }, NNRT_ERR_BACKEND,
                   "fakegpu: injected failure"};
      total += sweep(f, inj, 200000);
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  nnrt_context_release(f.ctx);
  for (const char *file : {"/saved.safetensors", "/data.csv", "/model.onnx", "/exported.onnx"})
    std::remove((f.dir + file).c_str());
  rmdir(f.dir.c_str());
  std::printf("fault_sweep %s: %ld faults injected, %d failures\n", mode.c_str(), total, failures);
  return failures ? 1 : 0;
}
