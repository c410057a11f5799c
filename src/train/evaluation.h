// Evaluation of a model on a dataset: classification metrics from a confusion matrix, or regression
// metrics, accumulated batch by batch.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/model.h"

namespace nnrt::train {

class Evaluation {
 public:
  // Classification with `classes` classes, or regression. `labels_per_example` > 1: each example
  // has a label per position (a language model's next tokens), each counted as one prediction.
  static Evaluation classification(int64_t classes, int64_t labels_per_example = 1);
  static Evaluation regression();

  // Adds a batch: predictions [n, outputs] (F32, host) and labels (I64 indices, or F32 targets
  // [n, outputs]). With a label per position, n counts the positions (rows of `outputs` classes).
  void add_classes(const float *pred, const int64_t *labels, int64_t n, int64_t outputs);
  void add_targets(const float *pred, const float *targets, int64_t n, int64_t outputs);

  bool is_classification() const { return classes_ > 0; }
  int64_t examples() const { return examples_ / labels_per_example_; }
  // The mean loss over the dataset (per position with a label per position), for the report's
  // "loss" and "perplexity" (exp of the loss: the class losses' natural measure of a language model).
  void set_loss(double mean_loss) { loss_ = mean_loss; }
  double accuracy() const;  // NaN for regression
  double mse() const;       // NaN for classification
  // The validation score trainers compare (higher is better): accuracy, or -MSE.
  double score() const { return is_classification() ? accuracy() : -mse(); }
  std::string report() const;  // the JSON of nnrt_evaluation_report

 private:
  int64_t classes_ = 0;
  int64_t examples_ = 0;  // labels counted: examples, or positions with a label per position
  int64_t labels_per_example_ = 1;
  double loss_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<int64_t> confusion_;  // [true][predicted]
  double sse_ = 0, sae_ = 0, sum_y_ = 0, sum_y2_ = 0;
  int64_t values_ = 0;
};

// Runs the model over the whole dataset (batches of `batch_size`). Throws nnrt::Error.
Evaluation evaluate(const model::Model &model, const std::shared_ptr<const data::Dataset> &data,
                    int64_t batch_size = 256);

// The model's mean loss over the whole dataset (inference mode: no dropout, running statistics).
double mean_loss(const model::Model &model, const std::shared_ptr<const data::Dataset> &data, int64_t batch_size = 256);

}  // namespace nnrt::train
