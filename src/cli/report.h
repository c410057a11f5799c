// The training report: one self-contained HTML page (inline SVG, no scripts or external files) with
// the loss and accuracy curves (and a language model's perplexity), the confusion matrix and the
// model summary.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nnrt_cli {

struct ReportInput {
  std::string title;
  nlohmann::json run;         // facts shown at the top: backend, threads, data, epochs, time
  nlohmann::json summary;     // nnrt_model_summary
  nlohmann::json result;      // nnrt_trainer_result (its history gives the per-epoch curves)
  nlohmann::json evaluation;  // nnrt_evaluation_report (may be null)
  std::vector<std::pair<double, double>> batch_losses;  // (epoch position, loss)
  std::vector<std::string> class_names;                 // optional
  // A language model (a loss per token): the curves also show the perplexity, exp(loss), and the
  // test set its perplexity instead of a confusion matrix of every token.
  bool language_model = false;
};

std::string render_report(const ReportInput &in);

// Writes text to a file; throws std::runtime_error naming it.
void write_text_file(const std::string &path, const std::string &text);

}  // namespace nnrt_cli
