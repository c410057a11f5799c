#!/usr/bin/env python3
"""The header's promises and the tests that hold it to them.

Reads every (function, status) pair the public headers document and finds, for each, a test that
asserts it. The functions are those of the application API (each NNRT_API function of nnrt.h and
nnrt_backend.h that returns nnrt_status) and of the plugin ABIs (each member of a function table in
nnrt_backend.h and nnrt_comm.h that returns nnrt_status, named table.member, e.g.
nnrt_comm_v1.wait). A function's statuses are the NNRT_ERR_* names in the "Returns ..." part of
the comment above it (a table member: the comment above it or above the group of members it is
in), with "the errors of nnrt_X" and "the statuses of nnrt_X" taken to mean nnrt_X's. Prints the
inventory and exits 1 when a pair has no test and is not on the allow-list below, when the
allow-list names a pair that is now tested or that the header no longer documents (so that the list
only shrinks), or when an entry says the fault sweeps inject a status into a call that they do not.

What counts as asserting (function F, status S), in a C or C++ source under tests/:
  - one statement (up to its ';' outside parentheses, lambdas included) that calls F and names S,
    such as CHECK_STATUS(F(...), S, "...") or EXPECT_EQ(F(...), S); a table member is called as
    ->member(...) or .member(...);
  - a statement that assigns F's result to a variable (v = F(...)) followed, within the next three
    statements, by one that names v and S;
  - a call, in a statement naming S, of a helper defined in the tests that takes an nnrt_status
    parameter and asserts F against it in one of the two ways above.
A statement that names S together with another status (NNRT_OK included), such as
EXPECT_TRUE(s == NNRT_ERR_CORRUPT || s == NNRT_ERR_SHAPE || s == NNRT_OK) or
expect_status(e, NNRT_ERR_CORRUPT, NNRT_ERR_VERSION), accepts any of them and asserts none. A
statement that names GTEST_SKIP or returns 77 only decides to skip, and asserts nothing.

    scripts/promise_inventory.py [--verbose] [ROOT]     (ROOT: the source tree, default: here)
"""
import os
import re
import sys

# Pairs no ordinary test can reach, each with the reason. Most need an allocation or a backend to
# fail on demand: the fault sweeps (tests/faults/fault_sweep.cpp) inject those faults into these
# calls and check, at run time, that every failure carries the injected status; a static read of
# the sources cannot see that (the status is the injector's), so the pairs stay listed here, and
# the script checks that the sweep has a case for each call. Entries leave this list as ordinary
# tests reach them.
FAULT_INJECTION = "injected by the fault sweeps (tests/faults)"
COMM_DEAD_RANK = "asserted through nnrt_trainer_fit only (tests/distributed: mpi_hang, mpi_kill)"
COMM_ENGINE_FAILURE = "untested: needs the MPI engine itself to fail"
ALLOWED_UNTESTED = {
    ("nnrt_array_from_host", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_array_to_host", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_op", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_load", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_predict", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_predict", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_predict_into", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_predict_into", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_predict_many", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_predict_many", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_share", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_quantize", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_quantize", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_array_wrap_host", "NNRT_ERR_OUT_OF_MEMORY"):
        "untested: wrapping allocates no array memory, only its handle; no test can make that fail",
    ("nnrt_model_generate", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_generate", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_model_evaluate", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_evaluate", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_dataset_load", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_dataset_examples", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_trainer_step", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_trainer_step", "NNRT_ERR_BACKEND"): FAULT_INJECTION,
    ("nnrt_trainer_fit", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_import_onnx", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_import_onnx_memory", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    ("nnrt_model_export_onnx", "NNRT_ERR_OUT_OF_MEMORY"): FAULT_INJECTION,
    # A communicator's engine failing. A rank that dies or stops answering shows in wait(), which
    # tests/distributed asserts only through the trainer (mpi_hang, mpi_kill: nnrt_trainer_fit
    # returns NNRT_ERR_BACKEND naming the rank); the others need MPI itself to fail (no network, a
    # launcher that cannot start), which no test here can bring about.
    ("nnrt_comm_v1.wait", "NNRT_ERR_BACKEND"): COMM_DEAD_RANK,
    ("nnrt_comm_v1.create", "NNRT_ERR_BACKEND"): COMM_ENGINE_FAILURE,
    ("nnrt_comm_v1.allreduce_sum", "NNRT_ERR_BACKEND"): COMM_ENGINE_FAILURE,
    ("nnrt_comm_v1.broadcast", "NNRT_ERR_BACKEND"): COMM_ENGINE_FAILURE,
    ("nnrt_comm_v1.allgather", "NNRT_ERR_BACKEND"): COMM_ENGINE_FAILURE,
    ("nnrt_comm_v1.barrier", "NNRT_ERR_BACKEND"): COMM_ENGINE_FAILURE,
}

HEADERS = ["include/nnrt/nnrt.h", "include/nnrt/nnrt_backend.h", "include/nnrt/nnrt_comm.h"]
# What the fault sweeps run: each case is named after the call it makes, and every case runs under
# each injector, which expects its own status (tests/faults/meson.build runs both sweeps).
FAULT_SWEEP = "tests/faults/fault_sweep.cpp"
SWEEP_CASE = re.compile(r'\{\s*"(nnrt_\w+)')
SWEEP_STATUSES = {"NNRT_ERR_OUT_OF_MEMORY", "NNRT_ERR_BACKEND"}
TEST_EXTENSIONS = (".c", ".cpp", ".h")
STATUS = re.compile(r"\bNNRT_ERR_[A-Z_]+\b")
ANY_STATUS = re.compile(r"\bNNRT_(?:OK|ERR_[A-Z_]+)\b")
DECLARATION = re.compile(r"NNRT_API\s+nnrt_status\s+(nnrt_\w+)\s*\(")
TABLE = re.compile(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*\1\s*;", re.S)
MEMBER = re.compile(r"nnrt_status\s*\(\s*\*\s*(\w+)\s*\)\s*\(")
INHERITS = re.compile(r"the (?:errors|statuses) of (nnrt_\w+)")
SKIPS = re.compile(r"\bGTEST_SKIP\b|\breturn\s+77\b")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "catch"}


def comment_above(text, start, adjacent):
    """The comment that ends last before `start`; with `adjacent`, only if nothing but blanks
    separates the two (else "")."""
    comment_end = text.rfind("*/", 0, start)
    if comment_end < 0 or (adjacent and text[comment_end + 2:start].strip()):
        return ""
    return text[text.rfind("/*", 0, comment_end):comment_end]


def promised(comment):
    """(statuses, inherited functions) of a comment: those of its "Returns ..." sentences, when it
    has any, since text before them may name the statuses of other functions (nnrt_trainer_cancel:
    fit "then returns NNRT_ERR_CANCELLED")."""
    if "Returns " in comment:
        comment = comment[comment.find("Returns "):]
    return set(STATUS.findall(comment)), INHERITS.findall(comment)


def documented_pairs(root):
    """{function: set of statuses} from the comments above the declarations (API functions) and
    above the members of the plugin ABIs' function tables (table.member)."""
    own, inherits = {}, {}
    for header in HEADERS:
        text = open(os.path.join(root, header)).read()
        for m in DECLARATION.finditer(text):
            # Only the comment that ends right above the declaration documents it.
            own[m.group(1)], inherits[m.group(1)] = promised(comment_above(text, m.start(), True))
        for table in TABLE.finditer(text):
            body = table.group(2)
            for m in MEMBER.finditer(body):
                # The comment above a group of members (the collectives) documents each of them.
                name = table.group(1) + "." + m.group(1)
                own[name], inherits[name] = promised(comment_above(body, m.start(), False))
    pairs = {}
    for f in own:
        pairs[f] = set(own[f])
        for base in inherits[f]:
            pairs[f] |= own.get(base, set())
        pairs[f].discard("NNRT_ERR_UNKNOWN")  # nnrt_status_name's answer, not a status
    return pairs


def swept_pairs(root):
    """The (function, status) pairs the fault sweeps assert at run time: every call a case of the
    sweep is named after, with each status an injector expects."""
    text = open(os.path.join(root, FAULT_SWEEP)).read()
    return {(f, s) for f in SWEEP_CASE.findall(text) if calls(strip(text), f) for s in SWEEP_STATUSES}


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


def call_pattern(function):
    """A call of an API function, or of a table member (table.member) through a pointer or struct."""
    if "." in function:
        return r"(?:->|\.)\s*" + function.split(".", 1)[1] + r"\s*\("
    return r"\b" + function + r"\s*\("


def calls(text, function):
    return re.search(call_pattern(function), text) is not None


def sole_statuses(text):
    """The status a statement asserts: the one it names, or none when it names several (NNRT_OK
    included), which is a check that accepts any of them."""
    named = set(ANY_STATUS.findall(text))
    return sorted(named) if len(named) == 1 and "NNRT_OK" not in named else []


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
            assigned = re.search(r"\b(\w+)\s*=\s*[^;=]*?" + call_pattern(f), text)
            if assigned:
                var = assigned.group(1)
                for _, _, later in stmts[k + 1:k + 4]:
                    if re.search(r"\b" + var + r"\b", later) and not SKIPS.search(later):
                        for s in status_of(later):
                            found.add((f, s))
    return found


def helpers(code, functions):
    """{helper name: set of functions whose status it stands for}: helpers that take an nnrt_status
    parameter and assert a function against it, and helpers that return a function's status (as
    the reference backend's create_op returns op_create's)."""
    out = {}
    for start, end, text in statements(code):
        if not text.endswith("{"):
            continue
        m = re.search(r"\b(\w+)\s*\(([^()]*)\)\s*(const\s*)?\{$", text)
        if not m or m.group(1) in KEYWORDS:
            continue
        param = re.search(r"\bnnrt_status\s+(\w+)", m.group(2))
        returns_status = re.search(r"\bnnrt_status\s+" + m.group(1) + r"\s*\($", text[:m.start(2)])
        if not param and not returns_status:
            continue
        depth, i = 1, end
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        body = statements(code[end:i])
        found = set()
        if param:
            name = param.group(1)
            # The parameter stands for any status; a statement naming another status beside it is
            # a one-of check.
            found |= {f for f, _ in asserted_in(
                body, functions,
                lambda t: ["*"] if re.search(r"\b" + name + r"\b", t) and not ANY_STATUS.search(t) else [])}
        if returns_status:
            found |= {f for f in functions if returns_result_of(body, f)}
        if found:
            out[m.group(1)] = found
    return out


def returns_result_of(body, function):
    """Whether the statements return function's result: return F(...), or v = F(...) and later
    return v."""
    for k, (_, _, text) in enumerate(body):
        if re.match(r"return\b[^;]*" + call_pattern(function), text):
            return True
        assigned = re.search(r"\b(\w+)\s*=\s*[^;=]*?" + call_pattern(function), text)
        if assigned and any(re.fullmatch(r"return\s+" + assigned.group(1) + r"\s*;", later)
                            for _, _, later in body[k + 1:]):
            return True
    return False


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
        pairs = asserted_in(stmts, functions, sole_statuses)
        for _, _, text in stmts:
            if SKIPS.search(text):
                continue
            for h, fs in helper_of.items():
                if calls(text, h):
                    pairs |= {(f, s) for f in fs for s in sole_statuses(text)}
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
    swept = swept_pairs(root)
    unswept = sorted(p for p, why in ALLOWED_UNTESTED.items() if why == FAULT_INJECTION and p not in swept)

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
    for f, s in unswept:
        why = (f"no sweep injects {s} (only {' and '.join(sorted(SWEEP_STATUSES))})" if s not in SWEEP_STATUSES
               else f"{FAULT_SWEEP} has no case that calls {f}")
        print(f"UNSWEPT   {f} {s}: on the allow-list as {FAULT_INJECTION}, but {why}")
    print(f"promise inventory: {len(pairs)} documented (function, status) pairs in {len(documented)} "
          f"functions; {len(pairs) - len(untested) - len(allowed)} asserted by tests, {len(allowed)} "
          f"allowed untested, {len(untested)} untested, {len(stale)} stale allow-list entries, "
          f"{len(unswept)} claiming a fault sweep that does not run")
    failed = len(untested) + len(stale) + len(unswept)
    print(f"nnrt-test-counts: passed={len(pairs) - len(untested) - len(allowed)} failed={failed} skipped=0")
    print(f"nnrt-test-counts: passed=0 failed=0 skipped={len(allowed)} reason=a documented status on the "
          f"allow-list (asserted nowhere else; its reason is in the list)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
