#!/usr/bin/env python3
"""Checks that each binding (Rust, Go, C#, Python) keeps up with libnnrt's C API.

    check_bindings.py SOURCE_ROOT LIBNNRT

The API is every function the built libnnrt exports (its dynamic nnrt_* functions) together with
every function a public header (include/nnrt/*.h) declares with NNRT_API. Cases, each one line:
  - headers: every exported function is declared in a public header, and every function a header
    declares is exported;
  - one per binding: every API function is declared by the binding or listed in its left_out.txt
    ("<function>: <reason>"); a listed function is still in the API, not declared by the binding
    after all, and listed once with a reason; and every function the binding declares is exported
    (a C# [DllImport] of a missing function fails only when it is called).

What counts as a declaration, per binding:
  - rust:   a `fn` inside an `extern "C"` block of src/*.rs (its #[link_name] when it has one);
  - go:     a call in C code, that is in a cgo preamble (the comment just above `import "C"`) or in a
            .h/.c file, counting the first argument of NNRT_GO_STRING_SHIM, and `C.nnrt_x(...)` in Go
            code when nnrt_x is an API function (a type conversion such as C.nnrt_dtype(d) looks the
            same, and a missing function would not compile anyway); nnrt_go_* are the binding's own;
  - csharp: an extern method under [DllImport] in src/*.cs (its EntryPoint when it has one);
  - python: a `_declare("nnrt_x", ...)` call (its ctypes signature) in nnrt/*.py.
Prints every problem, naming the binding and the function, then a count line (scripts/test_summary.py)
and exits 1 when anything failed."""
import os
import re
import subprocess
import sys

BINDINGS = ("rust", "go", "csharp", "python")
LEFT_OUT = "left_out.txt"

C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
HEADER_FUNCTION = re.compile(r"\bNNRT_API\b[^;{(]*?\b(nnrt_\w+)\s*\(")
RUST_EXTERN_BLOCK = re.compile(r'\bextern\s+"C"\s*\{')
RUST_FN = re.compile(r'(?:#\[link_name\s*=\s*"(\w+)"\]\s*)?(?:pub(?:\([\w:]+\))?\s+)?(?:unsafe\s+)?fn\s+(\w+)\s*\(')
C_CALL = re.compile(r"\b(nnrt_\w+)\s*\(")
GO_STRING_SHIM = re.compile(r"\bNNRT_GO_STRING_SHIM\(\s*(nnrt_\w+)")
GO_C_CALL = re.compile(r"\bC\.(nnrt_\w+)\s*\(")
CSHARP_IMPORT = re.compile(r"\[DllImport\(([^\]]*)\)\]\s*(?:\w+\s+)*?extern\s+[\w.\[\]]+\s+(\w+)\s*\(")
CSHARP_ENTRY_POINT = re.compile(r'\bEntryPoint\s*=\s*"(\w+)"')
PYTHON_DECLARE = re.compile(r'^\s*_declare\(\s*"(nnrt_\w+)"', re.M)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def files_in(folder, suffixes, exclude=()):
    """Paths of the files directly in folder whose names end in one of suffixes (sorted)."""
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                  if n.endswith(suffixes) and not n.endswith(exclude))


def exported_functions(library):
    """The nnrt_* functions the shared library exports (nm -D)."""
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                         text=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "TWi" and f[2].startswith("nnrt_")}


def header_functions(include_dir):
    """{function: header path relative to the source root} of every NNRT_API function."""
    found = {}
    for folder, _, names in os.walk(include_dir):
        for name in sorted(names):
            if name.endswith(".h"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(os.path.dirname(include_dir)))
                for fn in HEADER_FUNCTION.findall(C_COMMENT.sub(" ", read(path))):
                    found.setdefault(fn, rel)
    return found


def rust_declarations(binding_dir, api):
    declared = set()
    for path in files_in(os.path.join(binding_dir, "src"), (".rs",)):
        text = re.sub(r"//[^\n]*", " ", read(path))
        for block in RUST_EXTERN_BLOCK.finditer(text):
            depth, end = 1, block.end()
            while depth and end < len(text):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
            for link_name, name in RUST_FN.findall(text[block.end():end]):
                declared.add(link_name or name)
    return declared


def cgo_preamble(text):
    """The C code of a Go file's cgo preamble: the // comment lines just above `import "C"`."""
    lines = text.splitlines()
    code = []
    for i, line in enumerate(lines):
        if line.strip() == 'import "C"':
            j = i - 1
            while j >= 0 and lines[j].startswith("//"):
                code.insert(0, re.sub(r"^// ?", "", lines[j]))
                j -= 1
    return "\n".join(code)


def go_declarations(binding_dir, api):
    c_code, go_code = [], []
    for path in files_in(binding_dir, (".h", ".c")):
        c_code.append(read(path))
    for path in files_in(binding_dir, (".go",), exclude=("_test.go",)):
        text = read(path)
        c_code.append(cgo_preamble(text))
        go_code.append(re.sub(r"//[^\n]*", " ", text))
    declared = set()
    for code in c_code:
        code = C_COMMENT.sub(" ", code)
        declared |= set(C_CALL.findall(code)) | set(GO_STRING_SHIM.findall(code))
    for code in go_code:
        declared |= {fn for fn in GO_C_CALL.findall(code) if fn in api}
    return {fn for fn in declared if not fn.startswith("nnrt_go_")}


def csharp_declarations(binding_dir, api):
    declared = set()
    for path in files_in(os.path.join(binding_dir, "src"), (".cs",)):
        text = re.sub(r"//[^\n]*", " ", read(path))
        for attributes, name in CSHARP_IMPORT.findall(text):
            entry = CSHARP_ENTRY_POINT.search(attributes)
            declared.add(entry.group(1) if entry else name)
    return declared


def python_declarations(binding_dir, api):
    declared = set()
    for path in files_in(os.path.join(binding_dir, "nnrt"), (".py",)):
        declared |= set(PYTHON_DECLARE.findall(read(path)))
    return declared


DECLARATIONS = {"rust": rust_declarations, "go": go_declarations, "csharp": csharp_declarations,
                "python": python_declarations}
WHERE = {
    "rust": "an extern \"C\" fn in src/sys.rs",
    "go": "a cgo shim in capi_*.go",
    "csharp": "a [DllImport] in src/Native.cs",
    "python": "a _declare line in nnrt/_capi.py",
}


def left_out(path):
    """({function: reason}, [problems]) from a left_out.txt: '<function>: <reason>' lines, # comments."""
    listed, problems = {}, []
    if not os.path.exists(path):
        return listed, problems
    for number, line in enumerate(read(path).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(":")
        name, reason = name.strip(), reason.strip()
        if not re.fullmatch(r"nnrt_\w+", name) or not reason:
            problems.append(f"line {number} is not '<function>: <reason>': {line!r}")
        elif name in listed:
            problems.append(f"lists {name} twice (line {number})")
        else:
            listed[name] = reason
    return listed, problems


def binding_problems(source_root, binding, api, headers):
    """The problems of one binding, each naming the binding and the function."""
    binding_dir = os.path.join(source_root, "bindings", binding)
    list_path = os.path.join("bindings", binding, LEFT_OUT)
    declared = DECLARATIONS[binding](binding_dir, api)
    listed, problems = left_out(os.path.join(source_root, list_path))
    problems = [f"{binding}: {list_path} {p}" for p in problems]
    for fn in sorted(api - declared - set(listed)):
        where = headers.get(fn, "exported by libnnrt")
        problems.append(f"{binding}: does not declare {fn} ({where}); declare it ({WHERE[binding]}) or list "
                        f"it in {list_path} with the reason")
    for fn in sorted(set(listed) - api):
        problems.append(f"{binding}: {list_path} lists {fn}, which libnnrt no longer has; remove the line")
    for fn in sorted(set(listed) & declared):
        problems.append(f"{binding}: {list_path} lists {fn} as left out, but the binding declares it; "
                        "remove the line")
    for fn in sorted(declared - api):
        problems.append(f"{binding}: declares {fn}, which libnnrt does not export")
    return problems


def header_problems(exports, headers):
    problems = [f"headers: libnnrt exports {fn}, which no public header declares with NNRT_API"
                for fn in sorted(exports - set(headers))]
    problems += [f"headers: {where} declares {fn}, which libnnrt does not export"
                 for fn, where in sorted(headers.items()) if fn not in exports]
    return problems


def check(source_root, exports):
    """[(case, [problems])]: the headers' case, then one case per binding."""
    headers = header_functions(os.path.join(source_root, "include", "nnrt"))
    api = set(exports) | set(headers)
    cases = [("headers", header_problems(set(exports), headers))]
    for binding in BINDINGS:
        cases.append((binding, binding_problems(source_root, binding, api, headers)))
    return cases, api


def main(argv):
    if len(argv) != 3:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    source_root, library = argv[1], argv[2]
    try:
        exports = exported_functions(library)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_bindings: cannot list the exports of {library} with nm: {e}", file=sys.stderr)
        return 1
    if not exports:
        print(f"check_bindings: {library} exports no nnrt_* function", file=sys.stderr)
        return 1
    cases, api = check(source_root, exports)
    failed = 0
    for case, problems in cases:
        for p in problems:
            print(f"FAILED {p}")
        failed += bool(problems)
        if not problems:
            print(f"ok {case}")
    print(f"{len(api)} API functions; bindings checked: {', '.join(BINDINGS)}")
    print(f"nnrt-test-counts: passed={len(cases) - failed} failed={failed} skipped=0")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
