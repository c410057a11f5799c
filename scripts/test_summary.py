#!/usr/bin/env python3
"""Reads the meson test logs of the given build folders and prints the suite's closing lines:

    N skipped
    N passed, N failed

counting each distinct test case once. Before them come the failures by program, the skipped cases
by reason, and one line for the repeats: the same cases run again (the conformance suite at other
seeds and in deterministic mode, MPI ranks other than 0, the sanitizer builds), which the closing
counts leave out, except that a failed repeat is added to "N failed" (a failure anywhere shows there).

    test_summary.py [--failure TEXT]... BUILD...

--failure TEXT: a step that failed outside the test logs (setup, a build, the time limit); each one
counts as a failed case. The first build folder is the main one; in a later one, a test that also ran
(by name) in an earlier folder is a repeat as a whole.

How a program's cases are counted, first rule that applies:
  1. A GoogleTest program run with protocol 'gtest': each test case in meson's JUnit report, a case
     that skipped itself (GTEST_SKIP) as skipped, with GTEST_SKIP's message as its reason.
  2. A program that prints count lines (the protocol below): the sum of its lines.
  3. Output in GoogleTest's own summary format ("[  PASSED  ] N tests.", "[  SKIPPED ] N tests,",
     "[  FAILED  ] N tests,"), for a GoogleTest program run without the gtest protocol.
  4. Otherwise the program is one case.
A program meson skipped (exit 77) counts as one skipped case, whatever it printed; its reason is the
last line it printed that says "skip". A program that failed (non-zero exit, crash, timeout) counts
at least one failure, even if every case it reported passed; one that exited 0 but reported failed
cases counts them as failed.

The line protocol, for any test program or script (tests/c/c_test.h, the conformance suite, the
ONNX node tests, the bindings' test scripts and the Python tests print it); all lines of one program
are added up:

    nnrt-test-counts: passed=N failed=N skipped=N [reason=TEXT]
    nnrt-test-repeats: passed=N failed=N skipped=N [reason=TEXT]

"counts" are distinct cases, "repeats" cases that another line or program already counts (another
seed, another mode, another rank). "reason=" says why the line's skipped cases were skipped: a
program prints one line per reason (passed=0 failed=0 skipped=N reason=...); skips without one are
listed under "(no reason given)".

Exits 1 when anything failed."""
import collections
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

COUNT_LINE = re.compile(
    r"^nnrt-test-(counts|repeats): passed=(\d+) failed=(\d+) skipped=(\d+)(?: reason=(.*?))?[ \t\r]*$", re.M)
GTEST_SUMMARY = {
    "passed": re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M),
    "skipped": re.compile(r"^\[  SKIPPED \] (\d+) tests?,", re.M),
    "failed": re.compile(r"^\[  FAILED  \] (\d+) tests?,", re.M),
}
NO_REASON = "(no reason given)"


class Tally:
    """Passed, failed and skipped cases, and the skipped ones by reason."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.reasons = collections.Counter()

    def add(self, passed, failed, skipped, reason=None):
        self.passed += passed
        self.failed += failed
        self.skipped += skipped
        if skipped:
            self.reasons[reason or NO_REASON] += skipped

    def merge(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.reasons.update(other.reasons)

    def empty(self):
        return self.passed + self.failed + self.skipped == 0


def meson_log(build, suffix):
    """The newest of a build folder's meson test logs ending in suffix, or None. meson names them
    testlog<suffix>, or testlog-<setup><suffix> when a test setup (`--setup`) is named."""
    logs = glob.glob(os.path.join(build, "meson-logs", "testlog*" + suffix))
    return max(logs, key=os.path.getmtime) if logs else None


def gtest_cases(build):
    """{meson test name: Tally} from meson's JUnit report."""
    cases = {}
    junit = meson_log(build, ".junit.xml")
    if junit is None:
        return cases
    for suite in ET.parse(junit).getroot().iter("testsuite"):
        name = suite.get("name", "")  # "<project>.<project>:<suite> / <test>.<gtest suite>"
        if " / " not in name or "." not in name:
            continue
        test = name.split(".", 1)[1].rsplit(".", 1)[0]  # "<project>:<suite> / <test>", as testlog.json
        tally = cases.setdefault(test, Tally())
        for case in suite.findall("testcase"):
            skipped = case.find("skipped")
            if case.find("failure") is not None or case.find("error") is not None:
                tally.add(0, 1, 0)
            elif skipped is not None or case.get("result") == "skipped":
                message = (skipped.get("message") if skipped is not None else "") or ""
                tally.add(0, 0, 1, message.strip().splitlines()[-1] if message.strip() else None)
            else:
                tally.add(1, 0, 0)
    return cases


def reported_counts(output):
    """{"counts": Tally, "repeats": Tally} that a program's output reports, or None when it reports none."""
    lines = COUNT_LINE.findall(output)
    if lines:
        kinds = {"counts": Tally(), "repeats": Tally()}
        for kind, passed, failed, skipped, reason in lines:
            kinds[kind].add(int(passed), int(failed), int(skipped), reason.strip() or None)
        return kinds
    found = {k: [int(n) for n in rx.findall(output)] for k, rx in GTEST_SUMMARY.items()}
    if found["passed"] or found["failed"]:
        tally = Tally()
        tally.add(sum(found["passed"]), sum(found["failed"]), sum(found["skipped"]))
        return {"counts": tally, "repeats": Tally()}
    return None


def skip_reason(output):
    """Why a program skipped itself (exit 77): the last line it printed that says so."""
    said = [line.strip() for line in output.splitlines()
            if "skip" in line.lower() and not line.startswith("nnrt-test-")]
    if not said:
        return "exit status 77, no reason printed"
    return re.sub(r"^(SKIP|skipped|skip)\s*:\s*", "", said[-1], flags=re.I)


def program_tallies(t, junit):
    """(distinct, repeats) Tallies of one program from meson's verdict and what it reported."""
    output = (t.get("stdout") or "") + "\n" + (t.get("stderr") or "")
    distinct, repeats = Tally(), Tally()
    if t["result"] == "SKIP":
        distinct.add(0, 0, 1, skip_reason(output))
        return distinct, repeats
    kinds = {"counts": junit[t["name"]], "repeats": Tally()} if t["name"] in junit else reported_counts(output)
    if kinds:
        distinct, repeats = kinds["counts"], kinds["repeats"]
    passed = t["result"] in ("OK", "EXPECTEDFAIL")
    if distinct.empty() and repeats.empty():
        distinct.add(1 if passed else 0, 0 if passed else 1, 0)
    elif not passed and distinct.failed + repeats.failed == 0:
        # The program failed although none of its cases did: one failure, on the side it reported.
        (repeats if distinct.empty() else distinct).failed += 1
    return distinct, repeats


def main(args):
    failures = []
    builds = []
    while args:
        if args[0] == "--failure" and len(args) > 1:
            failures.append(args[1])
            args = args[2:]
        else:
            builds.append(args[0])
            args = args[1:]
    distinct, repeats = Tally(), Tally()
    distinct.failed += len(failures)
    programs_by_reason = collections.defaultdict(set)
    seen = set()  # test names run in an earlier build folder
    for build in builds:
        log = meson_log(build, ".json")
        if log is None:
            distinct.failed += 1
            failures.append(f"{build}: no test log (the build or the test run did not happen)")
            continue
        junit = gtest_cases(build)
        names = set()
        with open(log) as f:
            for line in f:
                t = json.loads(line)
                name = f"{os.path.basename(build)}/{t['name']}"
                mine, again = program_tallies(t, junit)
                if t["name"] in seen:  # the same program in a sanitizer build
                    again.merge(mine)
                    mine = Tally()
                names.add(t["name"])
                distinct.merge(mine)
                repeats.merge(again)
                for reason in list(mine.reasons) + list(again.reasons):
                    programs_by_reason[reason].add(name)
                if mine.failed + again.failed:
                    failures.append(f"{name}: {t['result']}, {mine.failed + again.failed} failed case(s)"
                                    + (" (in repeats)" if again.failed else ""))
        seen |= names
    if distinct.reasons or repeats.reasons:
        print("skipped, by reason (distinct cases, then repeats):")
        for reason in sorted(set(distinct.reasons) | set(repeats.reasons),
                             key=lambda r: (-distinct.reasons[r], -repeats.reasons[r], r)):
            where = sorted(programs_by_reason[reason])
            named = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
            print(f"  {distinct.reasons[reason]:6d} {repeats.reasons[reason]:7d}  {reason}  [{named}]")
    for f in failures:
        print(f"FAILED: {f}")
    print(f"repeats (the same cases again: other seeds and modes, other MPI ranks, the sanitizer builds): "
          f"{repeats.passed} passed, {repeats.failed} failed, {repeats.skipped} skipped")
    # The closing line keeps the form CI reads, "N passed, N failed"; the skipped count comes just before.
    print(f"{distinct.skipped} skipped")
    print(f"{distinct.passed} passed, {distinct.failed + repeats.failed} failed")
    return 1 if distinct.failed + repeats.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
