"""Evaluations: a model's metrics on a dataset."""
from __future__ import annotations

import ctypes
import math
from typing import Any, Dict, Optional

import numpy as np

from . import _capi
from ._core import Handle, read_json, read_value


class Evaluation(Handle):
    """The metrics of Model.evaluate (nnrt_evaluation). Classification: accuracy, per-class
    precision, recall, F1 and support, macro and weighted averages, the confusion matrix;
    regression: mse, mae, r2. `report` is the whole of nnrt_evaluation_report as a dict."""

    _kind = "evaluation"

    @property
    def accuracy(self) -> float:
        """The fraction of examples classified right; NaN for a regression evaluation."""
        return read_value(_capi.lib().nnrt_evaluation_accuracy, ctypes.c_double, self._ptr)

    @property
    def report(self) -> Dict[str, Any]:
        return read_json(_capi.lib().nnrt_evaluation_report, self._ptr)

    @property
    def confusion_matrix(self) -> Optional[np.ndarray]:
        """Rows: true class, columns: predicted (int64); None for a regression evaluation."""
        matrix = self.report.get("confusion_matrix")
        return None if matrix is None else np.asarray(matrix, dtype=np.int64)

    def __getitem__(self, key: str) -> Any:
        """A key of the report: evaluation["mse"], evaluation["per_class"], ..."""
        return self.report[key]

    def __repr__(self) -> str:
        if self.closed:
            return "<nnrt.Evaluation closed>"
        acc = self.accuracy
        if math.isnan(acc):
            return f"<nnrt.Evaluation mse={self.report.get('mse')}>"
        return f"<nnrt.Evaluation accuracy={acc:.4f}>"
