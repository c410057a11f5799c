#!/usr/bin/env python3
"""Reads the meson test logs of the given build folders and prints one closing line:
"N passed, N failed" (after a line "N skipped"), counting every case of every test program.

How a program's cases are counted, first rule that applies:
  1. A GoogleTest program run with protocol 'gtest': each test case in meson's JUnit report, a case
     that skipped itself (GTEST_SKIP) as skipped.
  2. A program that prints count lines (the protocol below): the sum of its lines.
  3. Output in GoogleTest's own summary format ("[  PASSED  ] N tests.", "[  SKIPPED ] N tests,",
     "[  FAILED  ] N tests,"), for a GoogleTest program run without the gtest protocol.
  4. Otherwise the program is one case.
A program meson skipped (exit 77) counts as one skipped case, whatever it printed. A program that
failed (non-zero exit, crash, timeout) counts at least one failure, even if every case it reported
passed; one that exited 0 but reported failed cases counts them as failed.

The line protocol, for any test program or script (tests/c/c_test.h, the conformance suite, the
bindings' test scripts and the Python tests print it); several lines from one program are added up:

    nnrt-test-counts: passed=N failed=N skipped=N

Prints the skipped and failed programs by name; exits 1 when anything failed."""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

COUNTS = re.compile(r"^nnrt-test-counts: passed=(\d+) failed=(\d+) skipped=(\d+)\s*$", re.M)
GTEST_SUMMARY = {
    "passed": re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M),
    "skipped": re.compile(r"^\[  SKIPPED \] (\d+) tests?,", re.M),
    "failed": re.compile(r"^\[  FAILED  \] (\d+) tests?,", re.M),
}


def gtest_cases(build):
    """{meson test name: [passed, failed, skipped]} from meson's JUnit report."""
    cases = {}
    junit = os.path.join(build, "meson-logs", "testlog.junit.xml")
    if not os.path.exists(junit):
        return cases
    for suite in ET.parse(junit).getroot().iter("testsuite"):
        name = suite.get("name", "")  # "<project>.<project>:<suite> / <test>.<gtest suite>"
        if " / " not in name or "." not in name:
            continue
        test = name.split(".", 1)[1].rsplit(".", 1)[0]  # "<project>:<suite> / <test>", as testlog.json
        counts = cases.setdefault(test, [0, 0, 0])
        for case in suite.findall("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                counts[1] += 1
            elif case.find("skipped") is not None or case.get("result") == "skipped":
                counts[2] += 1
            else:
                counts[0] += 1
    return cases


def reported_counts(output):
    """[passed, failed, skipped] that a program's output reports, or None when it reports none."""
    lines = COUNTS.findall(output)
    if lines:
        return [sum(int(line[k]) for line in lines) for k in range(3)]
    found = {k: [int(n) for n in rx.findall(output)] for k, rx in GTEST_SUMMARY.items()}
    if found["passed"] or found["failed"]:
        return [sum(found["passed"]), sum(found["failed"]), sum(found["skipped"])]
    return None


def count(result, cases):
    """[passed, failed, skipped] of one program from meson's verdict and its own counts (or None)."""
    if result == "SKIP":
        return [0, 0, 1]
    if cases is None or sum(cases) == 0:
        cases = [1, 0, 0] if result in ("OK", "EXPECTEDFAIL") else [0, 1, 0]
    passed, failed, skipped = cases
    if result not in ("OK", "EXPECTEDFAIL"):
        failed = max(failed, 1)
    return [passed, failed, skipped]


def main(builds):
    totals = [0, 0, 0]
    failures, skips = [], []
    for build in builds:
        log = os.path.join(build, "meson-logs", "testlog.json")
        if not os.path.exists(log):
            totals[1] += 1
            failures.append(f"{build}: no test log (the build or the test run did not happen)")
            continue
        junit = gtest_cases(build)
        with open(log) as f:
            for line in f:
                t = json.loads(line)
                name = f"{os.path.basename(build)}/{t['name']}"
                cases = junit.get(t["name"])
                if cases is None:
                    cases = reported_counts((t.get("stdout") or "") + "\n" + (t.get("stderr") or ""))
                passed, failed, skipped = count(t["result"], cases)
                totals = [totals[0] + passed, totals[1] + failed, totals[2] + skipped]
                if t["result"] == "SKIP":
                    skips.append(f"{name} (the whole program)")
                elif skipped:
                    skips.append(f"{name}: {skipped} case(s)")
                if failed:
                    failures.append(f"{name}: {t['result']}, {failed} failed case(s)")
    for s in skips:
        print(f"skipped: {s}")
    for f in failures:
        print(f"FAILED: {f}")
    # The closing line keeps the form CI reads, "N passed, N failed"; the skipped count comes just before.
    print(f"{totals[2]} skipped")
    print(f"{totals[0]} passed, {totals[1]} failed")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
