// Post-training static quantization. Calibration predicts examples with the float model and keeps,
// for each layer to quantize, the smallest and largest value its input took; that range fixes the
// input's 8-bit scale (U8 over [0, max] when it never went negative, else I8 symmetric over
// [-max|x|, max|x|]). Weights are quantized per output unit, symmetrically, to [-63, 63] or
// [-127, 127] (nnrt.h, nnrt_model_quantize, says why 7 bits is the default). Calibration keeps every
// activation of one batch at a time (a forward pass as training runs it), which bounds its memory
// by "batch_size".
#include "model/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/run_control.h"
#include "model/param_storage.h"

namespace nnrt::model {

namespace {

bool quantizable(const Layer &layer) { return layer.type == "dense" || layer.type == "conv2d"; }

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
};

// The input ranges of the nodes in `targets`, over the calibration batches.
std::vector<Range> calibrate(const Model &m, const std::shared_ptr<const data::Dataset> &data,
                             const std::vector<int32_t> &targets, const QuantizeOptions &o) {
  Context &ctx = m.ctx();
  const nnrt_dtype dtype = ctx.options().default_dtype;
  data::BatchIterator batches(data, m.context_ptr(), o.batch_size, false, 0, 1, dtype);
  data::Batch b;
  std::vector<Range> ranges(m.nodes().size());
  std::shared_lock<WriterPreferringSharedMutex> read(m.lock());
  std::vector<Array> params = m.params_as(dtype);
  for (int64_t seen = 0; (o.batches == 0 || seen < o.batches) && batches.next(b); ++seen) {
    check_run();
    m.check_input(b.x, "nnrt_model_quantize (a calibration batch)");
    Pass pass{ctx, false, 0, dtype, {}};
    Activations acts = m.forward(pass, {b.x}, params);
    for (int32_t t : targets) {
      Array x = m.gather_inputs(m.nodes()[t], acts.inputs, acts.out)[0];
      const uint32_t all = ops::all_axes(x.rank());
      ranges[t].lo = std::min(ranges[t].lo, ops::item(ops::reduce(ctx, NNRT_REDUCE_MIN, x, all, false)));
      ranges[t].hi = std::max(ranges[t].hi, ops::item(ops::reduce(ctx, NNRT_REDUCE_MAX, x, all, false)));
    }
  }
  return ranges;
}

Json input_quantization(const Range &r, int32_t weight_bits, const std::string &where) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "nnrt_model_quantize: the input of ", where, " took values from ", r.lo, " to ", r.hi,
         " on the calibration examples; a finite range is needed");
  }
  const bool unsigned_input = r.lo >= 0;
  const double reach = unsigned_input ? r.hi : std::max(-r.lo, r.hi);
  const double scale = reach > 0 ? reach / (unsigned_input ? 255.0 : 127.0) : 1.0;
  return Json{{"input_dtype", unsigned_input ? "u8" : "i8"}, {"input_scale", scale}, {"input_zero_point", 0},
              {"weight_bits", weight_bits}};
}

// The config's entry of the layer named `name` ("layers": a sequence whose unnamed entries are
// "layer<i>"; "nodes": a graph).
Json &config_entry(Json &config, const std::string &name) {
  const bool sequential = config.contains("layers");
  Json &list = config[sequential ? "layers" : "nodes"];
  for (size_t i = 0; i < list.size(); ++i) {
    Json &entry = list[i];
    std::string entry_name = entry.contains("name") ? entry["name"].get<std::string>() : cat("layer", i);
    if (entry_name == name) return entry;
  }
  fail(NNRT_ERR_INTERNAL, "nnrt_model_quantize: layer \"", name, "\" is not in the model's config");
}

// w [units, ...] (F32, host) as I8 rows with one symmetric scale per row.
void quantize_rows(const std::vector<double> &w, int64_t units, int32_t max_abs, std::vector<int8_t> &q,
                   std::vector<float> &scales) {
  const size_t row = units > 0 ? w.size() / static_cast<size_t>(units) : 0;
  q.resize(w.size());
  scales.resize(static_cast<size_t>(units));
  for (size_t u = 0; u < scales.size(); ++u) {
    double reach = 0;
    for (size_t i = 0; i < row; ++i) reach = std::max(reach, std::fabs(w[u * row + i]));
    const float scale = reach > 0 ? static_cast<float>(reach / max_abs) : 1.0f;
    scales[u] = scale;
    for (size_t i = 0; i < row; ++i) {
      double v = std::nearbyint(w[u * row + i] / scale);
      q[u * row + i] = static_cast<int8_t>(std::clamp(v, -double(max_abs), double(max_abs)));
    }
  }
}

}  // namespace

QuantizeOptions QuantizeOptions::parse(const Json &options) {
  JsonReader r(options, "options");
  QuantizeOptions o;
  o.batches = r.get_int("batches", o.batches, 0);
  o.batch_size = r.get_int("batch_size", o.batch_size, 1);
  o.weight_bits = static_cast<int32_t>(r.get_int("weight_bits", o.weight_bits, 7, 8));
  if (r.has("exclude")) o.exclude = r.get_string_list("exclude");
  r.finish();
  return o;
}

std::shared_ptr<Model> quantize(const Model &m, const std::shared_ptr<const data::Dataset> &calibration,
                                const QuantizeOptions &o) {
  m.require_one_input("nnrt_model_quantize");
  if (calibration->size() == 0) fail(NNRT_ERR_INVALID_ARGUMENT, "nnrt_model_quantize: the calibration set is empty");
  std::set<std::string> excluded(o.exclude.begin(), o.exclude.end());
  std::vector<int32_t> targets;
  for (size_t i = 0; i < m.nodes().size(); ++i) {
    const Layer &layer = *m.nodes()[i].layer;
    if (layer.attributes.contains("int8")) {
      fail(NNRT_ERR_UNSUPPORTED, "nnrt_model_quantize: the model is already quantized (", layer.where(), " is int8)");
    }
    if (quantizable(layer) && !excluded.erase(layer.name)) targets.push_back(static_cast<int32_t>(i));
  }
  if (!excluded.empty()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.exclude: the model has no layer named \"", *excluded.begin(), "\"");
  }
  if (targets.empty()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "nnrt_model_quantize: the model has no dense or conv2d layer to quantize",
         o.exclude.empty() ? "" : " (besides those excluded)");
  }
  std::vector<Range> ranges = calibrate(m, calibration, targets, o);

  Json config = m.config();
  for (int32_t t : targets) {
    const Layer &layer = *m.nodes()[t].layer;
    config_entry(config, layer.name)["int8"] = input_quantization(ranges[t], o.weight_bits, layer.where());
  }
  check_run();
  std::shared_ptr<Model> q = Model::create(m.context_ptr(), config);

  // Parameters: the quantized layers' weights rounded to integers, every other value copied.
  std::shared_lock<WriterPreferringSharedMutex> read(m.lock());
  std::unique_lock<WriterPreferringSharedMutex> write = q->lock_for_writing();
  const int32_t max_abs = o.weight_bits == 7 ? 63 : 127;
  for (const Param &src : m.params()) {
    const Param *dst = q->find_param(src.name);
    if (!dst) fail(NNRT_ERR_INTERNAL, "nnrt_model_quantize: no parameter \"", src.name, "\" in the quantized model");
    if (dst->spec.dtype != NNRT_DTYPE_I8) {
      ops::copy_into(q->ctx(), src.value, dst->value);
      continue;
    }
    const int64_t units = src.value.dim(0);
    std::vector<int8_t> values;
    std::vector<float> scales;
    quantize_rows(ops::to_doubles(src.value), units, max_abs, values, scales);
    write_param(q->ctx(), dst->value, values.data(), values.size());
    const Param *scale = q->find_param(src.name.substr(0, src.name.size() - std::string("weight").size()) + "weight_scale");
    if (!scale) fail(NNRT_ERR_INTERNAL, "nnrt_model_quantize: no scale for \"", src.name, "\"");
    write_param(q->ctx(), scale->value, scales.data(), scales.size() * sizeof(float));
  }
  return q;
}

}  // namespace nnrt::model
