"""From Spark rows to the blocks executors train on: one (features, labels) pair of NumPy arrays per
partition, converted once and cached by Spark, so that no step converts rows."""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np


@dataclasses.dataclass(frozen=True)
class Columns:
    """How to read one example from a row: where the features and the label are, the model's input
    shape, and the factor that turns raw bytes into features."""

    features: str
    label: Optional[str]
    input_shape: Tuple[int, ...]
    binary_dtype: str = "uint8"  # how a BinaryType features column is read
    scale: float = 1.0           # features are multiplied by it when they are made float32


def _feature_array(values: List[Any], columns: Columns) -> np.ndarray:
    """The features of a partition as one array of shape [n, *input_shape], in the compact dtype they
    came in (raw bytes stay uint8 until a batch is made: a quarter of the memory and of the bytes
    Spark moves)."""
    n = len(values)
    per_example = int(np.prod(columns.input_shape))
    if n == 0:
        return np.zeros((0,) + columns.input_shape, np.float32)
    first = values[0]
    if isinstance(first, (bytes, bytearray, memoryview)):
        flat = np.frombuffer(b"".join(values), dtype=np.dtype(columns.binary_dtype))
    elif hasattr(first, "toArray"):  # pyspark.ml.linalg vectors, dense or sparse
        flat = np.concatenate([np.asarray(v.toArray(), np.float32).ravel() for v in values])
    else:  # array columns (lists) and NumPy arrays
        flat = np.asarray(values, dtype=np.float32).ravel()
    if flat.size != n * per_example:
        raise ValueError(f"column '{columns.features}': expected {per_example} values per example (the model's "
                         f"input {list(columns.input_shape)}), got {flat.size} for {n} examples")
    return flat.reshape((n,) + columns.input_shape)


def to_block(rows: Iterable[Any], columns: Columns) -> Tuple[np.ndarray, np.ndarray]:
    """Turns a partition's rows (Spark Rows, or (features, label) pairs of an RDD) into one block."""
    features, labels = [], []
    for row in rows:
        if isinstance(row, tuple) and not hasattr(row, "asDict"):
            f, label = row
        else:
            f, label = row[columns.features], row[columns.label] if columns.label else None
        features.append(f)
        labels.append(label)
    x = _feature_array(features, columns)
    if columns.label is None and labels and labels[0] is None:
        return x, np.zeros(0, np.int64)
    if any(label is None for label in labels):
        raise ValueError(f"column '{columns.label}': a row has no label (null)")
    y = np.asarray(labels)
    if y.dtype.kind not in "iu":
        if y.dtype.kind == "f" and np.all(np.floor(y) == y):
            y = y.astype(np.int64)  # class indices stored as doubles (Spark ML's habit)
        else:
            raise ValueError(f"column '{columns.label}': expected class indices (integers), got {y.dtype}")
    return x, y.astype(np.int64, copy=False)


def partition_block(rows: Iterator[Any], columns: Columns) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """mapPartitions function: a partition of rows becomes a partition of exactly one block."""
    yield to_block(rows, columns)


def batch_features(x: np.ndarray, scale: float) -> np.ndarray:
    """A batch as the model takes it: C-contiguous float32, scaled."""
    out = np.asarray(x, dtype=np.float32)
    if scale != 1.0:
        out = out * np.float32(scale)
    return np.ascontiguousarray(out)


def blocks_of(data: Any, columns: Columns, partitions: int):
    """The RDD of blocks, `partitions` of them, for a DataFrame or an RDD of (features, label)."""
    rdd = data
    if hasattr(data, "rdd") and hasattr(data, "columns"):  # a DataFrame
        wanted: Sequence[str] = [columns.features] + ([columns.label] if columns.label else [])
        missing = [c for c in wanted if c not in data.columns]
        if missing:
            raise ValueError(f"the DataFrame has no column {missing[0]!r} (it has {data.columns})")
        rdd = data.select(*wanted).rdd
    if rdd.getNumPartitions() != partitions:
        rdd = rdd.repartition(partitions)
    return rdd.mapPartitions(lambda rows: partition_block(rows, columns), preservesPartitioning=True)
