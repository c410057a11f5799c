"""scripts/test_summary.py against made-up meson logs: each counting rule, skipped programs and
skipped GoogleTest cases with their reasons, repeats (count lines and a later build folder's runs of
the same programs) kept out of the closing count but not their failures, failures that a program's
own counts do not show, steps that failed outside the logs, and the closing lines.

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

CONFORMANCE = {"name": "nnrt:conformance / conformance", "result": "OK",
               "stdout": "x\nnnrt-test-counts: passed=5 failed=0 skipped=0\n"
                         "nnrt-test-counts: passed=0 failed=0 skipped=3 reason=not supported by onednn: f64\n"
                         "nnrt-test-counts: passed=2 failed=0 skipped=0\n"}
TESTS = [
    # GoogleTest through the JUnit report: 3 passed, 1 failed, 1 skipped ("runs as root").
    {"name": "nnrt:unit / model", "result": "FAIL", "stdout": ""},
    # The line protocol, lines added up: 7 passed, 0 failed, 3 skipped (not supported).
    CONFORMANCE,
    # GoogleTest's summary in the output of a program run without the gtest protocol: 4, 0, 2.
    {"name": "nnrt:unit / plain_gtest", "result": "OK",
     "stdout": "[  PASSED  ] 4 tests.\n[  SKIPPED ] 2 tests, listed below:\n"},
    # Nothing to read: one case.
    {"name": "nnrt:python / python_ctypes", "result": "OK", "stdout": "ok\n"},
    # Skipped by exit 77: one skipped case, whatever it printed, with the reason it printed.
    {"name": "nnrt:parity / pytorch_parity", "result": "SKIP",
     "stdout": "skipped: python3 has no torch\nnnrt-test-counts: passed=9 failed=0 skipped=0\n"},
    # Crashed after reporting only passes: its passes count, and one failure.
    {"name": "nnrt:c / test_model", "result": "ERROR", "stdout": "nnrt-test-counts: passed=6 failed=0 skipped=0\n"},
    # Exited 0 but reported failures: they count.
    {"name": "nnrt:c / test_ops", "result": "OK", "stdout": "nnrt-test-counts: passed=1 failed=2 skipped=0\n"},
    # Repeats only (other seeds): 50 passed, 1 failed, 30 skipped, none in the distinct counts, but
    # the failure is in the closing line.
    {"name": "nnrt:conformance / conformance_seeds", "result": "FAIL",
     "stdout": "nnrt-test-repeats: passed=50 failed=1 skipped=0\n"
               "nnrt-test-repeats: passed=0 failed=0 skipped=30 reason=not supported by onednn: f64\n"},
]
# A later build folder (a sanitizer build): the same conformance program again is a repeat; a
# program that runs only there (the fault sweep) is distinct.
LATER = [CONFORMANCE, {"name": "nnrt:faults / fault_sweep", "result": "OK",
                       "stdout": "nnrt-test-counts: passed=12 failed=0 skipped=0\n"}]


def write_logs(build, tests, junit=None):
    os.makedirs(os.path.join(build, "meson-logs"), exist_ok=True)
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        for t in tests:
            f.write(json.dumps(t) + "\n")
    if junit:
        with open(os.path.join(build, "meson-logs", "testlog.junit.xml"), "w") as f:
            f.write(junit)


def run(builds):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = test_summary.main(builds)
    return status, out.getvalue()


def closing(out):
    return "\n".join(out.strip().splitlines()[-2:])


failures = []
with tempfile.TemporaryDirectory() as root:
    build, later = os.path.join(root, "build"), os.path.join(root, "build-asan")
    write_logs(build, TESTS, JUNIT)
    write_logs(later, LATER)

    status, out = run(["--failure", "build-tsan: the build failed", build, later])
    skipped = 1 + 3 + 2 + 1
    passed = 3 + 7 + 4 + 1 + 0 + 6 + 1 + 12
    failed = 1 + 0 + 0 + 0 + 0 + 1 + 2 + 1 + 1  # the last two: the repeat that failed, --failure
    want = f"{skipped} skipped\n{passed} passed, {failed} failed"
    if closing(out) != want:
        failures.append(f"closing lines {closing(out)!r}, expected {want!r}")
    if "repeats (" not in out or ": 57 passed, 1 failed, 33 skipped" not in out:
        failures.append("the repeats line is missing or wrong (want 57 passed, 1 failed, 33 skipped)")
    if status != 1:
        failures.append(f"exit status {status} with failures, expected 1")
    for name in ("build/nnrt:unit / model", "build/nnrt:c / test_model", "build/nnrt:c / test_ops",
                 "build/nnrt:conformance / conformance_seeds", "build-tsan: the build failed"):
        if f"FAILED: {name}" not in out:
            failures.append(f"{name} is not named as failed")
    for reason in ("     3      33  not supported by onednn: f64", "     1       0  python3 has no torch",
                   "     1       0  runs as root", "     2       0  (no reason given)"):
        if reason not in out:
            failures.append(f"skip reason line {reason!r} is missing")

    # A build folder without a log is a failure.
    status, out = run([os.path.join(root, "missing")])
    if status != 1 or not out.strip().endswith("0 skipped\n0 passed, 1 failed"):
        failures.append(f"a missing log gave status {status} and {out.strip().splitlines()[-1]!r}")

    # All well: exit 0.
    write_logs(build, [CONFORMANCE])
    status, out = run([build])
    if status != 0 or closing(out) != "3 skipped\n7 passed, 0 failed":
        failures.append(f"a passing log gave status {status} and {closing(out)!r}")

for f in failures:
    print(f"FAILED: {f}")
print(f"nnrt-test-counts: passed={0 if failures else 1} failed={len(failures)} skipped=0")
sys.exit(1 if failures else 0)
