// Runs one case on the backend under test and on the reference, and compares.
#pragma once

#include <string>

#include "backends.h"
#include "cases.h"

namespace nnrt::conformance {

struct CaseResult {
  enum Status { passed, failed, unsupported } status = passed;
  std::string message;  // why it failed, or the backend's reason for refusing
};

CaseResult run_case(const Case &c, const Device &tested, const Device &reference);

}  // namespace nnrt::conformance
