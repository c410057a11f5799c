#include "train/evaluation.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/run_control.h"
#include "model/layers/output.h"

namespace nnrt::train {

Evaluation Evaluation::classification(int64_t classes, int64_t labels_per_example) {
  Evaluation e;
  e.classes_ = classes;
  e.labels_per_example_ = labels_per_example;
  e.confusion_.assign(static_cast<size_t>(classes * classes), 0);
  return e;
}

Evaluation Evaluation::regression() { return Evaluation(); }

void Evaluation::add_classes(const float *pred, const int64_t *labels, int64_t n, int64_t outputs) {
  for (int64_t i = 0; i < n; ++i) {
    const float *row = pred + i * outputs;
    int64_t best = 0;
    for (int64_t c = 1; c < outputs; ++c)
      if (row[c] > row[best]) best = c;
    int64_t t = labels[i];
    if (t < 0 || t >= classes_) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "evaluation: label ", t, " of example ", (examples_ + i) / labels_per_example_,
           " is outside [0, ", classes_, ")");
    }
    confusion_[static_cast<size_t>(t * classes_ + best)]++;
  }
  examples_ += n;
}

void Evaluation::add_targets(const float *pred, const float *targets, int64_t n, int64_t outputs) {
  for (int64_t i = 0; i < n * outputs; ++i) {
    double d = static_cast<double>(pred[i]) - targets[i];
    sse_ += d * d;
    sae_ += std::fabs(d);
    sum_y_ += targets[i];
    sum_y2_ += static_cast<double>(targets[i]) * targets[i];
  }
  values_ += n * outputs;
  examples_ += n;
}

double Evaluation::accuracy() const {
  if (!is_classification() || examples_ == 0) return std::numeric_limits<double>::quiet_NaN();
  int64_t right = 0;
  for (int64_t c = 0; c < classes_; ++c) right += confusion_[static_cast<size_t>(c * classes_ + c)];
  return static_cast<double>(right) / static_cast<double>(examples_);
}

double Evaluation::mse() const {
  if (is_classification() || values_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return sse_ / static_cast<double>(values_);
}

std::string Evaluation::report() const {
  Json j;
  j["examples"] = examples();
  if (!is_classification()) {
    double n = static_cast<double>(values_);
    double sst = sum_y2_ - sum_y_ * sum_y_ / n;  // total sum of squares around the mean
    j["mse"] = mse();
    j["mae"] = sae_ / n;
    j["r2"] = sst > 0 ? 1 - sse_ / sst : std::numeric_limits<double>::quiet_NaN();
    return j.dump();
  }
  if (labels_per_example_ > 1) j["labels"] = examples_;  // accuracy and the matrix count each position
  j["classes"] = classes_;
  j["accuracy"] = accuracy();
  if (!std::isnan(loss_)) {
    j["loss"] = loss_;
    j["perplexity"] = std::exp(loss_);
  }
  Json per_class = Json::array();
  double macro[3] = {0, 0, 0}, weighted[3] = {0, 0, 0};
  for (int64_t c = 0; c < classes_; ++c) {
    int64_t tp = confusion_[static_cast<size_t>(c * classes_ + c)], predicted = 0, support = 0;
    for (int64_t k = 0; k < classes_; ++k) {
      predicted += confusion_[static_cast<size_t>(k * classes_ + c)];
      support += confusion_[static_cast<size_t>(c * classes_ + k)];
    }
    // A class never predicted (or never present) scores 0, as scikit-learn's zero_division=0.
    double precision = predicted ? static_cast<double>(tp) / predicted : 0;
    double recall = support ? static_cast<double>(tp) / support : 0;
    double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
    per_class.push_back({{"class", c}, {"precision", precision}, {"recall", recall}, {"f1", f1}, {"support", support}});
    double m[3] = {precision, recall, f1};
    for (int k = 0; k < 3; ++k) {
      macro[k] += m[k] / static_cast<double>(classes_);
      weighted[k] += examples_ ? m[k] * static_cast<double>(support) / static_cast<double>(examples_) : 0;
    }
  }
  j["per_class"] = per_class;
  j["macro_avg"] = {{"precision", macro[0]}, {"recall", macro[1]}, {"f1", macro[2]}};
  j["weighted_avg"] = {{"precision", weighted[0]}, {"recall", weighted[1]}, {"f1", weighted[2]}};
  Json matrix = Json::array();
  for (int64_t t = 0; t < classes_; ++t) {
    matrix.push_back(std::vector<int64_t>(confusion_.begin() + t * classes_, confusion_.begin() + (t + 1) * classes_));
  }
  j["confusion_matrix"] = matrix;
  return j.dump();
}

Evaluation evaluate(const model::Model &model, const std::shared_ptr<const data::Dataset> &data, int64_t batch_size) {
  model.require_one_input("evaluate");
  if (data->size() == 0) fail(NNRT_ERR_INVALID_ARGUMENT, "evaluate: the dataset is empty");
  if (data->example_shape() != model.input_shapes()[0]) {
    fail(NNRT_ERR_SHAPE, "evaluate: the dataset's examples are ", to_string(data->example_shape()),
         " but the model's input is ", to_string(model.input_shapes()[0]));
  }
  const Shape &out_shape = model.nodes()[model.output_node()].out_shape;
  int64_t outputs = out_shape.numel();
  int64_t positions = 1;  // labels per example
  Evaluation e;
  if (data->has_class_labels()) {
    const Shape &labels = data->label_shape();
    if (labels.rank > 0) {
      // A label per position: the output is the label shape and the classes, [T, classes].
      Shape leading = out_shape;
      --leading.rank;
      if (out_shape.rank != labels.rank + 1 || leading != labels) {
        fail(NNRT_ERR_SHAPE, "evaluate: the dataset's examples have class labels shaped ", to_string(labels),
             " but the model's outputs are ", to_string(out_shape), "; a label per position needs outputs shaped ",
             to_string(labels), " and the classes");
      }
      positions = labels.numel();
      outputs = out_shape[out_shape.rank - 1];
    }
    if (data->num_classes() > outputs) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "evaluate: the dataset has class labels up to ", data->num_classes() - 1,
           " but the model has ", outputs, " outputs");
    }
    e = Evaluation::classification(outputs, positions);
  } else {
    if (data->target_shape().numel() != outputs) {
      fail(NNRT_ERR_SHAPE, "evaluate: targets ", to_string(data->target_shape()), " do not fit the model's ", outputs,
           " outputs");
    }
    e = Evaluation::regression();
  }
  data::BatchIterator batches(data, model.context_ptr(), batch_size, false, 0, 2);
  data::Batch b;
  std::vector<float> pred;
  while (batches.next(b)) {
    check_run();  // evaluate_ex's run options, also between batches
    Array y = model.predict(b.x);
    pred.resize(static_cast<size_t>(y.numel()));
    y.copy_to_host(pred.data(), pred.size() * sizeof(float));
    if (e.is_classification()) {
      std::vector<int64_t> labels(static_cast<size_t>(b.n * positions));
      b.y.copy_to_host(labels.data(), labels.size() * sizeof(int64_t));
      e.add_classes(pred.data(), labels.data(), b.n * positions, outputs);
    } else {
      std::vector<float> targets(static_cast<size_t>(b.y.numel()));
      b.y.copy_to_host(targets.data(), targets.size() * sizeof(float));
      e.add_targets(pred.data(), targets.data(), b.n, outputs);
    }
  }
  // A label per position is a language model's (or a tagger's), judged by its loss and perplexity
  // more than by accuracy. Only then: measuring the loss takes a second pass over the data, which a
  // classifier's evaluation need not pay.
  const model::OutputLayer *out = model.output_layer();
  if (positions > 1 && out && out->class_loss()) e.set_loss(mean_loss(model, data, batch_size));
  return e;
}

double mean_loss(const model::Model &model, const std::shared_ptr<const data::Dataset> &data, int64_t batch_size) {
  const model::OutputLayer *out = model.output_layer();
  if (!out) fail(NNRT_ERR_INVALID_ARGUMENT, "the model has no output layer, so no loss");
  if (data->size() == 0) fail(NNRT_ERR_INVALID_ARGUMENT, "the dataset is empty");
  Context &ctx = model.ctx();
  nnrt_dtype dtype = ctx.options().default_dtype;
  data::BatchIterator batches(data, model.context_ptr(), batch_size, false, 0, 2, dtype);
  data::Batch b;
  double total = 0;
  std::shared_lock<WriterPreferringSharedMutex> read(model.lock());
  std::vector<Array> params = model.params_as(dtype);
  while (batches.next(b)) {
    check_run();
    model::Pass pass{ctx, false, 0, dtype, {}};
    model::Activations acts = model.forward(pass, {b.x}, params);
    total += ops::item(out->loss(pass, acts.saved[model.output_node()], b.y)) * static_cast<double>(b.n);
  }
  return total / static_cast<double>(data->size());
}

}  // namespace nnrt::train
