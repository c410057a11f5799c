"""scripts/promise_inventory.py against a made-up source tree: which statements assert a
(function, status) pair and which do not, statuses inherited from another function, the plugin
ABIs' table members, helpers, and allow-list entries that claim a fault sweep it does not have.

    promise_inventory_test.py SOURCE_ROOT"""
import contextlib
import io
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(sys.argv[1], "scripts"))
import promise_inventory as inventory  # noqa: E402

NNRT_H = """
/* Opens it. Returns NNRT_OK; NNRT_ERR_IO when the file cannot be read; NNRT_ERR_CORRUPT for a bad
** file. */
NNRT_API nnrt_status nnrt_open(const char *path, nnrt_thing **out);

/* As nnrt_open, from memory. Returns the statuses of nnrt_open; NNRT_ERR_INVALID_ARGUMENT for NULL. */
NNRT_API nnrt_status nnrt_open_memory(const void *data, size_t n, nnrt_thing **out);

/* Sends it. Returns NNRT_OK; NNRT_ERR_BACKEND when the device fails. */
NNRT_API nnrt_status nnrt_send(nnrt_thing *t);
"""

BACKEND_H = """
typedef struct nnrt_table_v1 {
  uint32_t struct_size;
  /* Device memory: alloc returns NNRT_ERR_OUT_OF_MEMORY. */
  nnrt_status (*alloc)(void *instance, size_t bytes, void **out);
  void (*release)(void *instance, void *ptr);
  /* The collectives. Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a bad root. */
  nnrt_status (*gather)(void *c, void *buf);
  nnrt_status (*scatter)(void *c, void *buf);
} nnrt_table_v1;
"""

TESTS = {
    # A disjunction accepts any of its statuses and asserts none; a lone status is asserted.
    "tests/c/test_open.c": """
void test(void) {
  nnrt_status s = nnrt_open("x", &t);
  CHECK(s == NNRT_ERR_IO || s == NNRT_ERR_CORRUPT);
  CHECK_STATUS(nnrt_open("/nonexistent", &t), NNRT_ERR_IO, "cannot be read");
  s = nnrt_open_memory(bad, 3, &t);
  CHECK(s == NNRT_ERR_CORRUPT || s == NNRT_OK);
  expect_status(nnrt_send(t), NNRT_ERR_BACKEND, NNRT_ERR_IO);
}
""",
    # A helper that returns the member's status, as the reference backend's create_op.
    "tests/unit/harness.cpp": """
nnrt_status gather_status(void *c) {
  nnrt_status s = table()->gather(c, nullptr);
  log_it();
  return s;
}
TEST(Table, Gather) { EXPECT_EQ(gather_status(c), NNRT_ERR_INVALID_ARGUMENT); }
TEST(Table, Alloc) { EXPECT_EQ(t.alloc(inst, SIZE_MAX, &p), NNRT_ERR_OUT_OF_MEMORY); }
""",
    "tests/faults/fault_sweep.cpp": """
cases = {
  {"nnrt_open", nothing, [&f] { return nnrt_open(path, &made); }, drop, {out_param(&made)}},
  {"nnrt_send widely", nothing, [&f] { return nnrt_send(thing); }, drop, {}},
};
""",
}

failures = 0


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAILED: {what}")


with tempfile.TemporaryDirectory() as root:
    inventory.HEADERS = ["include/nnrt/nnrt.h", "include/nnrt/nnrt_backend.h"]
    files = {"include/nnrt/nnrt.h": NNRT_H, "include/nnrt/nnrt_backend.h": BACKEND_H, **TESTS}
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    documented = inventory.documented_pairs(root)
    expect(documented.get("nnrt_open_memory") == {"NNRT_ERR_IO", "NNRT_ERR_CORRUPT", "NNRT_ERR_INVALID_ARGUMENT"},
           f"'Returns the statuses of nnrt_open' inherits nnrt_open's: {documented.get('nnrt_open_memory')}")
    expect(documented.get("nnrt_table_v1.alloc") == {"NNRT_ERR_OUT_OF_MEMORY"},
           f"a table member is documented by the comment above it: {documented.get('nnrt_table_v1.alloc')}")
    expect(documented.get("nnrt_table_v1.scatter") == {"NNRT_ERR_INVALID_ARGUMENT"},
           f"a group's comment documents each member of the group: {documented.get('nnrt_table_v1.scatter')}")
    expect("nnrt_table_v1.release" not in documented, "a member that returns no status promises none")

    tested = inventory.tested_pairs(root, sorted(documented))
    expect(("nnrt_open", "NNRT_ERR_IO") in tested, "CHECK_STATUS(nnrt_open(...), NNRT_ERR_IO) asserts it")
    expect(("nnrt_open", "NNRT_ERR_CORRUPT") not in tested,
           "CHECK(s == NNRT_ERR_IO || s == NNRT_ERR_CORRUPT) asserts neither status")
    expect(("nnrt_open_memory", "NNRT_ERR_CORRUPT") not in tested,
           "CHECK(s == NNRT_ERR_CORRUPT || s == NNRT_OK) does not assert NNRT_ERR_CORRUPT")
    expect(("nnrt_send", "NNRT_ERR_BACKEND") not in tested,
           "expect_status(..., NNRT_ERR_BACKEND, NNRT_ERR_IO) accepts either and asserts neither")
    expect(("nnrt_table_v1.gather", "NNRT_ERR_INVALID_ARGUMENT") in tested,
           "a helper that returns the member's status counts where its result is checked")
    expect(("nnrt_table_v1.alloc", "NNRT_ERR_OUT_OF_MEMORY") in tested, "t.alloc(...) is a call of the member")
    expect(("nnrt_table_v1.scatter", "NNRT_ERR_INVALID_ARGUMENT") not in tested, "nothing calls scatter")

    swept = inventory.swept_pairs(root)
    expect(("nnrt_open", "NNRT_ERR_OUT_OF_MEMORY") in swept, "the sweep's nnrt_open case counts")
    expect(("nnrt_send", "NNRT_ERR_BACKEND") in swept, "a case named after its call with more words counts")
    expect(("nnrt_open_memory", "NNRT_ERR_OUT_OF_MEMORY") not in swept, "no case calls nnrt_open_memory")

    # The whole report: an allow-list entry claiming the sweep for a call it lacks fails the run.
    inventory.ALLOWED_UNTESTED = {("nnrt_open_memory", "NNRT_ERR_OUT_OF_MEMORY"): inventory.FAULT_INJECTION}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = inventory.main([root])
    expect(status == 1, "main fails on untested pairs and sweep claims it cannot back")
    expect("UNSWEPT   nnrt_open_memory NNRT_ERR_OUT_OF_MEMORY" in out.getvalue(), out.getvalue())
    expect("UNTESTED  nnrt_open NNRT_ERR_CORRUPT" in out.getvalue(), out.getvalue())

print(f"promise_inventory_test: {failures} failures")
sys.exit(1 if failures else 0)
