#!/usr/bin/env python3
"""Reads the meson test logs of the given build folders and prints one line: N passed, N failed.

A GoogleTest program counts once per test case (meson's JUnit report lists them); any other test
counts once. A test that crashed or timed out counts as failed even if its cases were not listed.
Skipped tests (exit 77) are counted apart and named."""
import json
import os
import sys
import xml.etree.ElementTree as ET


def gtest_cases(build):
    """{meson test name: (cases, failed cases)} from the JUnit report."""
    cases = {}
    junit = os.path.join(build, "meson-logs", "testlog.junit.xml")
    if not os.path.exists(junit):
        return cases
    for suite in ET.parse(junit).getroot().iter("testsuite"):
        name = suite.get("name", "")  # "<project>.<project>:<suite> / <test>.<gtest suite>"
        if " / " not in name or "." not in name:
            continue
        test = name.split(".", 1)[1].rsplit(".", 1)[0]  # "<project>:<suite> / <test>", as testlog.json
        tc = suite.findall("testcase")
        bad = [c for c in tc if c.find("failure") is not None or c.find("error") is not None]
        n, f = cases.get(test, (0, 0))
        cases[test] = (n + len(tc), f + len(bad))
    return cases


passed = failed = skipped = 0
failures, skips = [], []
for build in sys.argv[1:]:
    log = os.path.join(build, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        failed += 1
        failures.append(f"{build}: no test log (the build or the test run did not happen)")
        continue
    cases = gtest_cases(build)
    with open(log) as f:
        for line in f:
            t = json.loads(line)
            name = f"{os.path.basename(build)}/{t['name']}"
            result = t["result"]
            n, bad = cases.get(t["name"], (0, 0))
            if result == "SKIP":
                skipped += 1
                skips.append(name)
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += max(n, 1)
            else:
                passed += max(n - bad, 0)
                failed += max(bad, 1)
                failures.append(f"{name}: {result}")

for s in skips:
    print(f"skipped: {s}")
for f in failures:
    print(f"FAILED: {f}")
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
