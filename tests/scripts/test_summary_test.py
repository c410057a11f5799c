"""scripts/test_summary.py against made-up meson logs: each counting rule, skipped programs and
skipped GoogleTest cases, failures that a program's own counts do not show, and the final line.

    test_summary_test.py SOURCE_ROOT"""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(sys.argv[1], "scripts"))
import test_summary  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="nnrt.nnrt:unit / model.ModelApi" tests="4">
    <testcase name="Ok" classname="ModelApi"/>
    <testcase name="AlsoOk" classname="ModelApi"/>
    <testcase name="AsRoot" classname="ModelApi"><skipped message="runs as root"/></testcase>
    <testcase name="Wrong" classname="ModelApi"><failure message="1 != 2"/></testcase>
  </testsuite>
  <testsuite name="nnrt.nnrt:unit / model.Other" tests="1">
    <testcase name="Ok" classname="Other"/>
  </testsuite>
</testsuites>
"""

TESTS = [
    # GoogleTest through the JUnit report: 3 passed, 1 failed, 1 skipped.
    {"name": "nnrt:unit / model", "result": "FAIL", "stdout": ""},
    # The line protocol, two lines added up: 7 passed, 0 failed, 3 skipped.
    {"name": "nnrt:conformance / conformance", "result": "OK",
     "stdout": "x\nnnrt-test-counts: passed=5 failed=0 skipped=3\nnnrt-test-counts: passed=2 failed=0 skipped=0\n"},
    # GoogleTest's summary in the output of a program run without the gtest protocol: 4, 0, 2.
    {"name": "nnrt:unit / plain_gtest", "result": "OK",
     "stdout": "[  PASSED  ] 4 tests.\n[  SKIPPED ] 2 tests, listed below:\n"},
    # Nothing to read: one case.
    {"name": "nnrt:python / python_ctypes", "result": "OK", "stdout": "ok\n"},
    # Skipped by exit 77: one skipped case, whatever it printed.
    {"name": "nnrt:parity / pytorch_parity", "result": "SKIP",
     "stdout": "nnrt-test-counts: passed=9 failed=0 skipped=0\n"},
    # Crashed after reporting only passes: its passes count, and one failure.
    {"name": "nnrt:c / test_model", "result": "ERROR", "stdout": "nnrt-test-counts: passed=6 failed=0 skipped=0\n"},
    # Exited 0 but reported failures: they count.
    {"name": "nnrt:c / test_ops", "result": "OK", "stdout": "nnrt-test-counts: passed=1 failed=2 skipped=0\n"},
]


def run(builds):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = test_summary.main(builds)
    return status, out.getvalue()


failures = []
with tempfile.TemporaryDirectory() as root:
    build = os.path.join(root, "build")
    os.makedirs(os.path.join(build, "meson-logs"))
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        for t in TESTS:
            f.write(json.dumps(t) + "\n")
    with open(os.path.join(build, "meson-logs", "testlog.junit.xml"), "w") as f:
        f.write(JUNIT)

    status, out = run([build])
    want = f"{1 + 3 + 2 + 0 + 1} skipped\n{3 + 7 + 4 + 1 + 0 + 6 + 1} passed, {1 + 0 + 0 + 0 + 0 + 1 + 2} failed"
    if "\n".join(out.strip().splitlines()[-2:]) != want:
        failures.append(f"final lines {out.strip().splitlines()[-2:]!r}, expected {want!r}")
    if status != 1:
        failures.append(f"exit status {status} with failures, expected 1")
    for name in ("build/nnrt:unit / model", "build/nnrt:c / test_model", "build/nnrt:c / test_ops"):
        if f"FAILED: {name}" not in out:
            failures.append(f"{name} is not named as failed")
    if "skipped: build/nnrt:parity / pytorch_parity (the whole program)" not in out:
        failures.append("the skipped program is not named")

    # A build folder without a log is a failure.
    status, out = run([os.path.join(root, "missing")])
    if status != 1 or not out.strip().endswith("0 skipped\n0 passed, 1 failed"):
        failures.append(f"a missing log gave status {status} and {out.strip().splitlines()[-1]!r}")

    # All well: exit 0.
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        f.write(json.dumps(TESTS[1]) + "\n")
    status, out = run([build])
    if status != 0 or "\n".join(out.strip().splitlines()[-2:]) != "3 skipped\n7 passed, 0 failed":
        failures.append(f"a passing log gave status {status} and {out.strip().splitlines()[-1]!r}")

for f in failures:
    print(f"FAILED: {f}")
print(f"nnrt-test-counts: passed={0 if failures else 1} failed={len(failures)} skipped=0")
sys.exit(1 if failures else 0)
