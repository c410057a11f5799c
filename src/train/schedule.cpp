#include "train/schedule.h"

#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace nnrt::train {

Schedule Schedule::read(JsonReader &r) {
  Schedule s;
  std::string type = r.require_string("type");
  if (type == "step") {
    s.kind_ = kStep;
    s.gamma_ = r.get_number("gamma", 0.1, 0);
    s.every_ = r.get_int("every_epochs", 1, 1);
  } else if (type == "exponential") {
    s.kind_ = kExponential;
    s.gamma_ = r.get_number("gamma", 0.9, 0);
  } else if (type == "cosine") {
    s.kind_ = kCosine;
    s.epochs_ = r.require_int("epochs", 1);
    s.warmup_ = r.get_int("warmup_epochs", 0, 0, s.epochs_ - 1);
    s.min_rate_ = r.get_number("min_learning_rate", 0, 0);
  } else if (type == "map") {
    s.kind_ = kMap;
    if (!r.has("values")) fail(NNRT_ERR_INVALID_ARGUMENT, r.name("values"), " is required: {\"<epoch>\": rate, ...}");
    const Json &values = r.raw("values");
    if (!values.is_object() || values.empty()) {
      fail(NNRT_ERR_INVALID_ARGUMENT, r.name("values"), ": expected an object of epoch -> rate, got ", json_excerpt(values));
    }
    for (auto it = values.begin(); it != values.end(); ++it) {
      char *end = nullptr;
      long long epoch = std::strtoll(it.key().c_str(), &end, 10);
      if (it.key().empty() || *end != 0 || epoch < 0) {
        fail(NNRT_ERR_INVALID_ARGUMENT, r.name("values"), ": keys must be epoch numbers, got \"", it.key(), "\"");
      }
      if (!it.value().is_number() || it.value().get<double>() < 0) {
        fail(NNRT_ERR_INVALID_ARGUMENT, r.name("values"), ".", it.key(), ": expected a rate >= 0, got ",
             json_excerpt(it.value()));
      }
      s.values_[epoch] = it.value().get<double>();
    }
  } else {
    fail(NNRT_ERR_INVALID_ARGUMENT, r.name("type"), ": unknown schedule \"", type,
         "\" (expected step, exponential, cosine or map)");
  }
  r.finish();
  return s;
}

double Schedule::rate(double base, int32_t epoch) const {
  switch (kind_) {
    case kConstant: return base;
    case kStep: return base * std::pow(gamma_, static_cast<double>(epoch / every_));
    case kExponential: return base * std::pow(gamma_, static_cast<double>(epoch));
    case kCosine: {
      if (epoch < warmup_) return base * static_cast<double>(epoch + 1) / static_cast<double>(warmup_ + 1);
      double span = static_cast<double>(epochs_ - warmup_);
      double progress = std::min(1.0, static_cast<double>(epoch - warmup_) / span);
      return min_rate_ + (base - min_rate_) * 0.5 * (1 + std::cos(3.14159265358979323846 * progress));
    }
    case kMap: {
      auto it = values_.upper_bound(epoch);
      return it == values_.begin() ? base : std::prev(it)->second;
    }
  }
  return base;
}

}  // namespace nnrt::train
