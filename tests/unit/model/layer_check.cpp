#include "layer_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "backend/ops.h"
#include "core/error.h"

namespace nnrt::model::testing {

std::shared_ptr<Context> make_context(const std::string &backend) {
  try {
    Json options = {{"backend", backend}};
    return Context::create(ContextOptions::parse(options.dump().c_str()));
  } catch (const Error &) {
    return nullptr;
  }
}

BuiltLayer build_layer(const Json &config, const std::vector<Shape> &inputs) {
  Json keys = config;
  std::string type = keys.at("type").get<std::string>();
  keys.erase("type");
  JsonReader reader(keys, "test layer");
  BuiltLayer built;
  built.layer = make_layer(type, reader);
  reader.finish();
  built.layer->type = type;
  built.layer->name = "test";
  built.out_shape = built.layer->build(inputs);
  return built;
}

// ---- arrays ---------------------------------------------------------------------------------

Array random_normal(Context &ctx, nnrt_dtype dtype, const Shape &shape, uint64_t seed, double mean, double std) {
  return ops::random(ctx, NNRT_RANDOM_NORMAL, dtype, shape, seed, 0, mean, std);
}

Array random_uniform(Context &ctx, nnrt_dtype dtype, const Shape &shape, uint64_t seed, double low, double high) {
  return ops::random(ctx, NNRT_RANDOM_UNIFORM, dtype, shape, seed, 0, low, high);
}

Array from_doubles(Context &ctx, nnrt_dtype dtype, const Shape &shape, const std::vector<double> &values) {
  Array f64 = ops::from_host(ctx, NNRT_DTYPE_F64, shape, values.data(), values.size() * sizeof(double));
  return dtype == NNRT_DTYPE_F64 ? f64 : ops::cast(ctx, f64, dtype);
}

Array distinct_values(Context &ctx, nnrt_dtype dtype, const Shape &shape, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<double>(i) - static_cast<double>(v.size()) / 2) * 0.1;
  std::mt19937_64 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return from_doubles(ctx, dtype, shape, v);
}

Array random_indices(Context &ctx, nnrt_dtype dtype, const Shape &shape, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (double &x : v) x = static_cast<double>(pick(rng));
  return from_doubles(ctx, dtype, shape, v);
}

Array copy_to(Context &ctx, const Array &a, nnrt_dtype dtype) {
  return from_doubles(ctx, dtype == nnrt_dtype(0) ? a.dtype() : dtype, a.shape(), ops::to_doubles(a));
}

std::vector<Array> make_params(Context &ctx, const Layer &layer, nnrt_dtype dtype, uint64_t seed) {
  std::vector<Array> params;
  // The normalizations keep F32 parameters whatever dtype the activations are computed in.
  bool batchnorm = layer.type == "batchnorm" || layer.type == "layer_norm" || layer.type == "rms_norm";
  std::vector<ParamSpec> specs = layer.param_specs();
  for (size_t j = 0; j < specs.size(); ++j) {
    const ParamSpec &spec = specs[j];
    uint64_t s = seed * 131 + j;
    if (spec.suffix == "running_var") params.push_back(random_uniform(ctx, NNRT_DTYPE_F32, spec.shape, s, 0.5, 1.5));
    else if (batchnorm && spec.suffix == "weight")
      params.push_back(random_normal(ctx, NNRT_DTYPE_F32, spec.shape, s, 1, 0.25));
    else if (batchnorm || !spec.trainable) params.push_back(random_normal(ctx, NNRT_DTYPE_F32, spec.shape, s, 0, 0.5));
    else params.push_back(random_normal(ctx, dtype, spec.shape, s, 0, 0.5));
  }
  return params;
}

double relative_error(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return NAN;
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max({scale, std::fabs(a[i]), std::fabs(b[i])});
  }
  return scale > 0 ? diff / scale : 0;
}

double relative_error(const Array &a, const Array &b) {
  if (a.shape() != b.shape()) return INFINITY;
  return relative_error(ops::to_doubles(a), ops::to_doubles(b));
}

// ---- gradient checks ------------------------------------------------------------------------

Objective random_projection(Context &ctx, const Shape &out_shape, nnrt_dtype dtype, uint64_t seed) {
  Array r = random_normal(ctx, dtype, out_shape, seed);
  auto weights = std::make_shared<std::vector<double>>(ops::to_doubles(r));
  Objective o;
  o.value = [weights](Pass &, const Array &out, const Saved &) {
    std::vector<double> v = ops::to_doubles(out);
    if (v.size() != weights->size()) fail(NNRT_ERR_SHAPE, "the output has an unexpected shape ", to_string(out.shape()));
    return std::inner_product(v.begin(), v.end(), weights->begin(), 0.0);
  };
  o.dout = [r](Pass &, const Array &, const Saved &) { return r; };
  return o;
}

std::string GradientReport::describe() const {
  std::string s;
  char buf[64];
  for (const auto &e : errors) {
    std::snprintf(buf, sizeof buf, "%.1e", e.second);
    s += (s.empty() ? "" : ", ") + e.first + " " + buf;
  }
  return s;
}

namespace {

// The value a dtype stores for v: what a perturbation really moved an element to.
double stored(nnrt_dtype dtype, double v) {
  return dtype == NNRT_DTYPE_F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// Central differences of f along the elements of x (all, or an even sample of max_elements),
// against the same elements of `analytic`. Returns the relative error.
double compare_with_differences(Context &ctx, const Array &x, const Array &analytic,
                                const std::function<double(const Array &)> &f, const GradientCheckOptions &options) {
  std::vector<double> base = ops::to_doubles(x), grad = ops::to_doubles(analytic);
  if (analytic.shape() != x.shape()) return INFINITY;
  int64_t count = static_cast<int64_t>(base.size());
  int64_t stride = std::max<int64_t>(1, (count + options.max_elements - 1) / options.max_elements);
  double h = x.dtype() == NNRT_DTYPE_F32 ? options.step_size_f32 : options.step_size;
  std::vector<double> numeric, expected;
  for (int64_t i = 0; i < count; i += stride) {
    std::vector<double> v = base;
    v[i] = base[i] + h;
    double hi = stored(x.dtype(), v[i]), f_hi = f(from_doubles(ctx, x.dtype(), x.shape(), v));
    v[i] = base[i] - h;
    double lo = stored(x.dtype(), v[i]), f_lo = f(from_doubles(ctx, x.dtype(), x.shape(), v));
    numeric.push_back((f_hi - f_lo) / (hi - lo));
    expected.push_back(grad[i]);
  }
  return relative_error(expected, numeric);
}

}  // namespace

GradientReport check_gradients(Context &ctx, const Layer &layer, const std::vector<Array> &inputs,
                               const std::vector<Array> &params, const Objective &objective,
                               const GradientCheckOptions &options) {
  Pass pass{ctx, true, options.step, NNRT_DTYPE_F64, {}};
  auto value_at = [&](const std::vector<Array> &in, const std::vector<Array> &p) {
    Saved saved;
    Array out = layer.forward(pass, in, p, saved);
    return objective.value(pass, out, saved);
  };

  Saved saved;
  Array out = layer.forward(pass, inputs, params, saved);
  Array dout = objective.dout(pass, out, saved);
  std::vector<Array> din(inputs.size()), dparams(params.size());
  layer.backward(pass, inputs, params, out, saved, dout, din, dparams);

  GradientReport report;
  auto record = [&](const std::string &what, double error) {
    report.errors.emplace_back(what, error);
    report.worst = std::isnan(error) || std::isnan(report.worst) ? NAN : std::max(report.worst, error);
  };
  for (size_t k = 0; options.check_inputs && k < inputs.size(); ++k) {
    std::string what = "input " + std::to_string(k);
    if (!din[k].defined()) {
      ADD_FAILURE() << layer.type << ": backward gave no gradient for " << what;
      continue;
    }
    record(what, compare_with_differences(ctx, inputs[k], din[k], [&](const Array &moved) {
      std::vector<Array> in = inputs;
      in[k] = moved;
      return value_at(in, params);
    }, options));
  }
  std::vector<ParamSpec> specs = layer.param_specs();
  for (size_t j = 0; j < params.size(); ++j) {
    if (!specs[j].trainable) {
      EXPECT_FALSE(dparams[j].defined()) << layer.type << ": state " << specs[j].suffix << " got a gradient";
      continue;
    }
    if (!dparams[j].defined()) {
      ADD_FAILURE() << layer.type << ": backward gave no gradient for " << specs[j].suffix;
      continue;
    }
    record(specs[j].suffix, compare_with_differences(ctx, params[j], dparams[j], [&](const Array &moved) {
      std::vector<Array> p = params;
      p[j] = moved;
      return value_at(inputs, p);
    }, options));
  }
  return report;
}

}  // namespace nnrt::model::testing
