"""Fixtures of the Spark tests: a Spark standalone cluster on this machine (Spark's local-cluster
mode: a master and two workers of one core each in the driver's JVM, each worker starting its own
executor JVM, all on loopback), and the count lines scripts/test_summary.py reads (the same as the
binding's other tests)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

import nnrt


def _binding_conftest():
    """The binding's own tests' conftest.py, for its count lines and constants (a module of another
    name: both files are called conftest)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conftest.py")
    spec = importlib.util.spec_from_file_location("nnrt_binding_conftest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_shared = _binding_conftest()
FASHION_MNIST = _shared.FASHION_MNIST
pytest_terminal_summary = _shared.pytest_terminal_summary  # the count lines

SPARK_VENV = os.path.expanduser("~/.cache/nnrt/spark-venv")


def _why_no_spark():
    if shutil.which("java") is None:
        return "no Java runtime (scripts/setup installs Debian's openjdk-17-jre-headless)"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return (f"PySpark is not importable by {sys.executable} (scripts/setup installs it into {SPARK_VENV}; "
                "bindings/python/test_spark uses that Python)")
    if not any(c.get("name") == "gloo" and c.get("loaded") for c in nnrt.Context(threads=1).describe()["comms"]):
        return "the Gloo communicator plugin (libnnrt-comm-gloo.so) was not built (meson needs libgloo-dev)"
    return None


@pytest.fixture(scope="session")
def spark():
    why = _why_no_spark()
    if why:
        pytest.skip(why)
    from pyspark.sql import SparkSession

    here = os.path.dirname(os.path.abspath(__file__))
    package_root = os.path.dirname(here)
    lib_dir = os.path.dirname(nnrt.library_path())
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors run this Python too
    session = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("nnrt-spark-tests")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               # The status tracker sees a stage's running tasks at once (the tests wait for them).
               .config("spark.ui.liveUpdate.period", "0")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.executorEnv.PYTHONPATH", package_root)
               .config("spark.executorEnv.PYTHONDONTWRITEBYTECODE", "1")
               .config("spark.executorEnv.NNRT_LIB_DIR", lib_dir)
               .config("spark.task.maxFailures", "4")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def executor_pids(spark_session):
    """The process ids of this application's executor JVMs."""
    app = spark_session.sparkContext.applicationId
    out = subprocess.run(["pgrep", "-f", f"CoarseGrainedExecutorBackend.*{app}"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]
