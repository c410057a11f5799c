"""tests/bindings/check_bindings.py against made-up source trees: a tree where every binding keeps up
passes, and each kind of drift fails naming the binding and the function.

    check_bindings_test.py SOURCE_ROOT"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "bindings"))
import check_bindings  # noqa: E402

EXPORTS = {"nnrt_a", "nnrt_b", "nnrt_backend_only"}

FILES = {
    "include/nnrt/nnrt.h": """
/* NNRT_API nnrt_status nnrt_in_a_comment(void); is no declaration. */
NNRT_API nnrt_status nnrt_a(nnrt_context *ctx,
                            int32_t n);
NNRT_API const char *nnrt_b(void);
""",
    "include/nnrt/nnrt_backend.h": "NNRT_API nnrt_status nnrt_backend_only(nnrt_backend_entry_fn entry);\n",
    "bindings/rust/src/sys.rs": """
/// Calls nnrt_not_declared() in a doc comment only.
pub fn nnrt_outside_extern() {}
unsafe extern "C" {
    /// First.
    // pub fn nnrt_old(); commented out: no declaration.
    pub fn nnrt_a(ctx: *mut c_void, n: i32) -> c_int;
    #[link_name = "nnrt_b"]
    pub fn b_renamed() -> *const c_char;
}
""",
    "bindings/go/nnrt_go.h": "/* copies nnrt_in_a_comment() */\n#define NNRT_GO_CALL(call) call\n",
    "bindings/go/capi.go": """package nnrt

// #include "nnrt_go.h"
//
// static nnrt_status nnrt_go_a(nnrt_context *ctx, int32_t n, char **err) {
//   NNRT_GO_CALL(nnrt_a(ctx, n));
// }
import "C"

func cB() string { return C.GoString(C.nnrt_b()) }
func cDType(d int) C.nnrt_dtype { return C.nnrt_dtype(d) } // a conversion, not a call
""",
    "bindings/csharp/src/Native.cs": """
internal static class Native
{
    // [DllImport(Lib)] internal static extern void nnrt_old(); commented out: no declaration.
    [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
    internal static extern Status nnrt_a(ContextHandle ctx, int n);
    [DllImport(Lib, CallingConvention = CallingConvention.Cdecl, EntryPoint = "nnrt_b")]
    internal static extern IntPtr B();
}
""",
    "bindings/python/nnrt/_capi.py": """
# _declare("nnrt_old", None, []) commented out: no declaration.
_declare("nnrt_a", STATUS, [c_void_p, c_int32])
_declare(
    "nnrt_b", c_char_p, [])
""",
}
LEFT_OUT = "# why\nnnrt_backend_only: the plugin ABI\n"


def tree(root, changes=None):
    """Writes FILES and a left_out.txt per binding into root, with changes {path: text or None}."""
    files = dict(FILES)
    for binding in check_bindings.BINDINGS:
        files[f"bindings/{binding}/{check_bindings.LEFT_OUT}"] = LEFT_OUT
    files.update(changes or {})
    for path, text in files.items():
        if text is None:
            continue
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def problems(changes=None, exports=EXPORTS):
    with tempfile.TemporaryDirectory() as root:
        tree(root, changes)
        cases, _ = check_bindings.check(root, exports)
    return {case: found for case, found in cases}


failures = []
checks = 0  # each drift the checker must report is one case


def expect(what, found, case, *parts, alone=True):
    """A problem of the case holds every part; with alone, the other cases have no problems."""
    global checks
    checks += 1
    others = {c: p for c, p in found.items() if c != case and p}
    if (alone and others) or not any(all(part in p for part in parts) for p in found[case]):
        failures.append(f"{what}: want a problem in {case} with {parts}, got {found}")


checks += 1
clean = problems()
if any(clean.values()):
    failures.append(f"the complete tree: want no problems, got {clean}")

expect("a Go shim removed", problems({"bindings/go/capi.go": FILES["bindings/go/capi.go"].replace(
    "NNRT_GO_CALL(nnrt_a(ctx, n));", "")}), "go", "go: does not declare nnrt_a", "include/nnrt/nnrt.h",
    "bindings/go/left_out.txt")
expect("a Rust declaration removed", problems({"bindings/rust/src/sys.rs": FILES["bindings/rust/src/sys.rs"].replace(
    "pub fn nnrt_a(ctx: *mut c_void, n: i32) -> c_int;", "")}), "rust", "rust: does not declare nnrt_a")
# A renamed entry point: nnrt_b is missing, and nnrt_c, which libnnrt does not export, is declared
# (a C# [DllImport] of a missing function fails only when it is called).
renamed = problems({"bindings/csharp/src/Native.cs": FILES["bindings/csharp/src/Native.cs"].replace(
    'EntryPoint = "nnrt_b"', 'EntryPoint = "nnrt_c"')})
expect("a C# entry point renamed", renamed, "csharp", "csharp: does not declare nnrt_b")
expect("a C# import of a missing function", renamed, "csharp", "declares nnrt_c, which libnnrt does not export")
expect("a Python declaration removed", problems({"bindings/python/nnrt/_capi.py": FILES[
    "bindings/python/nnrt/_capi.py"].replace('_declare("nnrt_a", STATUS, [c_void_p, c_int32])', "")}), "python",
    "python: does not declare nnrt_a", "bindings/python/left_out.txt")
expect("a left-out function that no longer exists", problems(
    {"bindings/rust/left_out.txt": LEFT_OUT + "nnrt_gone: was removed\n"}), "rust",
    "rust: bindings/rust/left_out.txt lists nnrt_gone, which libnnrt no longer has")
expect("a left-out function that the binding declares", problems(
    {"bindings/csharp/left_out.txt": LEFT_OUT + "nnrt_a: not needed\n"}), "csharp",
    "csharp: bindings/csharp/left_out.txt lists nnrt_a as left out, but the binding declares it")
expect("a left-out line without a reason", problems({"bindings/go/left_out.txt": "nnrt_backend_only\n"}), "go",
    "line 1 is not '<function>: <reason>'")
expect("no left_out.txt", problems({"bindings/go/left_out.txt": None}), "go",
    "go: does not declare nnrt_backend_only", "include/nnrt/nnrt_backend.h")
# An export no header declares: the headers' case fails, and it is in the API all the same.
hidden = problems(exports=EXPORTS | {"nnrt_hidden"})
expect("an export no header declares", hidden, "headers", "libnnrt exports nnrt_hidden, which no public header",
       alone=False)
expect("an export no header declares, in a binding", hidden, "rust", "rust: does not declare nnrt_hidden",
       alone=False)
# A function a header declares but the library does not export is in the API all the same.
checks += 1
found = problems(exports=EXPORTS - {"nnrt_b"})
if found["headers"] != ["headers: include/nnrt/nnrt.h declares nnrt_b, which libnnrt does not export"] or \
        any(found[b] for b in check_bindings.BINDINGS):
    failures.append(f"a declared function the library lacks: {found}")

for f in failures:
    print(f"FAILED {f}")
print(f"nnrt-test-counts: passed={checks - len(failures)} failed={len(failures)} skipped=0")
sys.exit(1 if failures else 0)
