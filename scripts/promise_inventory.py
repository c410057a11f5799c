#!/usr/bin/env python3
"""The header's promises and the tests that hold it to them.

Reads every (function, status) pair the public headers document -- the NNRT_ERR_* names in the
"Returns ..." part of the comment above each NNRT_API function that returns nnrt_status, with
"the errors of nnrt_X" taken to mean nnrt_X's -- and finds, for each, a test that asserts it. Prints the inventory and exits 1
when a pair has no test and is not on the allow-list below, or when the allow-list names a pair
that is now tested or that the header no longer documents (so that the list only shrinks).

What counts as asserting (function F, status S), in a C or C++ source under tests/:
  - one statement (up to its ';' outside parentheses, lambdas included) that calls F and names S,
    such as CHECK_STATUS(F(...), S, "...") or EXPECT_EQ(F(...), S);
  - a statement that assigns F's result to a variable (v = F(...)) followed, within the next three
    statements, by one that names v and S;
  - a call, in a statement naming S, of a helper defined in the tests that takes an nnrt_status
    parameter and asserts F against it in one of the two ways above.
A statement that names GTEST_SKIP or returns 77 only decides to skip, and asserts nothing.

    scripts/promise_inventory.py [--verbose] [ROOT]     (ROOT: the source tree, default: here)
"""
import os
import re
import sys

# Pairs no ordinary test can reach: they need an allocation or a backend to fail on demand. The
# fault sweeps (tests/faults/fault_sweep.cpp) inject those faults into these calls and check, at run
# time, that every failure carries the injected status; a static read of the sources cannot see
# that (the status is the injector's), so the pairs stay listed here. Entries leave this list as
# ordinary tests reach them.
FAULT_INJECTION = "injected by the fault sweeps (tests/faults)"
ALLOWED_UNTESTED = {
    ("nnrt_array_from_host", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_array_to_host", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_op", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_load", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_predict", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_predict", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_evaluate", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_evaluate", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_dataset_load", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_dataset_examples", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_trainer_step", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_trainer_step", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_trainer_fit", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_import_onnx", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_export_onnx", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
}

HEADERS = ["include/nnrt/nnrt.h", "include/nnrt/nnrt_backend.h"]
TEST_EXTENSIONS = (".c", ".cpp", ".h")
STATUS = re.compile(r"\bNNRT_ERR_[A-Z_]+\b")
DECLARATION = re.compile(r"NNRT_API\s+nnrt_status\s+(nnrt_\w+)\s*\(")
INHERITS = re.compile(r"the errors of (nnrt_\w+)")
SKIPS = re.compile(r"\bGTEST_SKIP\b|\breturn\s+77\b")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "catch"}


def documented_pairs(root):
    """{function: set of statuses} from the comments above the declarations."""
    own, inherits = {}, {}
    for header in HEADERS:
        text = open(os.path.join(root, header)).read()
        for m in DECLARATION.finditer(text):
            comment_end = text.rfind("*/", 0, m.start())
            comment = text[text.rfind("/*", 0, comment_end):comment_end]
            # Only the comment that ends right above the declaration documents it.
            if text[comment_end + 2:m.start()].strip():
                comment = ""
            # The statuses are those of its "Returns ..." sentences; text before them may name the
            # statuses of other functions (nnrt_trainer_cancel: fit "then returns NNRT_ERR_CANCELLED").
            if "Returns " in comment:
                comment = comment[comment.find("Returns "):]
            own[m.group(1)] = set(STATUS.findall(comment))
            inherits[m.group(1)] = INHERITS.findall(comment)
    pairs = {}
    for f in own:
        pairs[f] = set(own[f])
        for base in inherits[f]:
            pairs[f] |= own.get(base, set())
        pairs[f].discard("NNRT_ERR_UNKNOWN")  # nnrt_status_name's answer, not a status
    return pairs


def strip(code):
    """The code without comments and with string and character literals emptied."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            i = code.find("\n", i)
            i = n if i < 0 else i
        elif code.startswith("/*", i):
            end = code.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif c in "\"'":
            if c == '"' and i > 0 and code[i - 1] == "R":  # C++ raw string R"delim(...)delim"
                open_paren = code.find("(", i)
                delim = code[i + 1:open_paren]
                end = code.find(")" + delim + '"', open_paren)
                i = n if end < 0 else end + len(delim) + 2
                out.append('""')
                continue
            j = i + 1
            while j < n and code[j] != c:
                j += 2 if code[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def statements(code):
    """(start, end, text) of each statement: split at ';', '{' and '}' outside parentheses."""
    result, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(depth - 1, 0)
        elif c in ";{}" and depth == 0:
            text = code[start:i + 1].strip()
            if text:
                result.append((start, i + 1, text))
            start = i + 1
    return result


def calls(text, function):
    return re.search(r"\b" + function + r"\s*\(", text) is not None


def asserted_in(stmts, functions, status_of):
    """(function, status) pairs the statements assert; status_of(text) gives the statuses a
    statement names (for a helper: the parameter's name, standing for any status)."""
    found = set()
    for k, (_, _, text) in enumerate(stmts):
        if SKIPS.search(text):
            continue
        named = status_of(text)
        for f in functions:
            if not calls(text, f):
                continue
            for s in named:
                found.add((f, s))
            assigned = re.search(r"\b(\w+)\s*=\s*" + f + r"\s*\(", text)
            if assigned:
                var = assigned.group(1)
                for _, _, later in stmts[k + 1:k + 4]:
                    if re.search(r"\b" + var + r"\b", later) and not SKIPS.search(later):
                        for s in status_of(later):
                            found.add((f, s))
    return found


def helpers(code, functions):
    """{helper name: set of functions it asserts against its nnrt_status parameter}."""
    out = {}
    for start, end, text in statements(code):
        if not text.endswith("{"):
            continue
        m = re.search(r"\b(\w+)\s*\(([^()]*)\)\s*(const\s*)?\{$", text)
        if not m or m.group(1) in KEYWORDS:
            continue
        param = re.search(r"\bnnrt_status\s+(\w+)", m.group(2))
        if not param:
            continue
        depth, i = 1, end
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        body = statements(code[end:i])
        name = param.group(1)
        asserted = asserted_in(body, functions, lambda t: ["*"] if re.search(r"\b" + name + r"\b", t) else [])
        if asserted:
            out[m.group(1)] = {f for f, _ in asserted}
    return out


def tested_pairs(root, functions):
    """{(function, status): [test files that assert it]}."""
    sources = []
    for folder, _, files in os.walk(os.path.join(root, "tests")):
        sources += [os.path.join(folder, f) for f in sorted(files) if f.endswith(TEST_EXTENSIONS)]
    codes = {path: strip(open(path, errors="replace").read()) for path in sources}
    helper_of = {}
    for code in codes.values():
        for h, fs in helpers(code, functions).items():
            helper_of.setdefault(h, set()).update(fs)
    found = {}
    for path, code in codes.items():
        stmts = statements(code)
        pairs = asserted_in(stmts, functions, STATUS.findall)
        for _, _, text in stmts:
            if SKIPS.search(text):
                continue
            for h, fs in helper_of.items():
                if calls(text, h):
                    pairs |= {(f, s) for f in fs for s in STATUS.findall(text)}
        for pair in pairs:
            found.setdefault(pair, []).append(os.path.relpath(path, root))
    return found


def main(argv):
    verbose = "--verbose" in argv
    args = [a for a in argv if a != "--verbose"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    documented = documented_pairs(root)
    tested = tested_pairs(root, sorted(documented))
    pairs = sorted((f, s) for f, statuses in documented.items() for s in statuses)
    untested = [p for p in pairs if p not in tested and p not in ALLOWED_UNTESTED]
    allowed = [p for p in pairs if p not in tested and p in ALLOWED_UNTESTED]
    stale = sorted(p for p in ALLOWED_UNTESTED if p in tested or p not in pairs)

    for f, s in pairs:
        if (f, s) in tested:
            if verbose:
                print(f"tested    {f} {s}: {', '.join(sorted(set(tested[(f, s)])))}")
        elif (f, s) in ALLOWED_UNTESTED:
            print(f"allowed   {f} {s}: {ALLOWED_UNTESTED[(f, s)]}")
        else:
            print(f"UNTESTED  {f} {s}: no test calls {f} and checks {s}")
    for f, s in stale:
        why = "a test asserts it now" if (f, s) in tested else "the header does not document it"
        print(f"STALE     {f} {s}: on the allow-list, but {why}; remove it from the list")
    print(f"promise inventory: {len(pairs)} documented (function, status) pairs in {len(documented)} "
          f"functions; {len(pairs) - len(untested) - len(allowed)} asserted by tests, {len(allowed)} "
          f"allowed untested ({FAULT_INJECTION}), {len(untested)} untested, {len(stale)} stale allow-list entries")
    failed = len(untested) + len(stale)
    print(f"nnrt-test-counts: passed={len(pairs) - len(untested) - len(allowed)} failed={failed} skipped=0")
    print(f"nnrt-test-counts: passed=0 failed=0 skipped={len(allowed)} reason=a documented status "
          f"on the allow-list, {FAULT_INJECTION}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
