package nnrt_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"nnrt.dev/nnrt"
)

// loadedLibraryDir returns the folder of the libnnrt this test process runs with.
func loadedLibraryDir(t *testing.T) string {
	t.Helper()
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatalf("cannot tell where libnnrt was loaded from: %v", err)
	}
	defer maps.Close()
	lines := bufio.NewScanner(maps)
	for lines.Scan() {
		if i := strings.Index(lines.Text(), "/"); i >= 0 && strings.Contains(lines.Text(), "/libnnrt.so") {
			return filepath.Dir(lines.Text()[i:])
		}
	}
	t.Fatal("libnnrt is not mapped into this process")
	return ""
}

// goTool finds the go command that runs this test.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the go command is neither on PATH nor at %s", p)
	}
	return p
}

// withoutRpath drops -Wl,-rpath flags from a CGO_LDFLAGS value.
func withoutRpath(flags string) string {
	var kept []string
	for _, f := range strings.Fields(flags) {
		if !strings.HasPrefix(f, "-Wl,-rpath") && !strings.HasPrefix(f, "-Wl,--rpath") {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " ")
}

// A program using the binding does not start without libnnrt: it fails with the loader's message
// naming the library, so this suite fails, never skips, where the library is missing. The test
// binary is relinked with its run-time search path pointing at an empty folder, then run with
// and without the library's folder on LD_LIBRARY_PATH.
func TestMissingLibraryFails(t *testing.T) {
	libDir := loadedLibraryDir(t)
	empty := t.TempDir()
	binary := filepath.Join(t.TempDir(), "nnrt.test")
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") && !strings.HasPrefix(kv, "CGO_LDFLAGS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "CGO_LDFLAGS="+withoutRpath(os.Getenv("CGO_LDFLAGS")))
	build := exec.Command(goTool(t), "test", "-c", "-o", binary, "-tags="+nnrt.LinkTags, "-ldflags=-r="+empty, ".")
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("relinking the test binary failed: %v\n%s", err, out)
	}

	run := func(extraEnv ...string) (string, error) {
		cmd := exec.Command(binary, "-test.run=^TestABIVersion$", "-test.count=1")
		cmd.Env = append(append([]string{}, env...), extraEnv...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err == nil {
		t.Fatalf("the suite ran without libnnrt on its search path (is libnnrt installed system-wide?):\n%s", out)
	}
	if !strings.Contains(out, "libnnrt.so") {
		t.Fatalf("the failure does not name the library: %v\n%s", err, out)
	}
	t.Logf("without the library: %s", strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	// The same binary works once the library can be found: the failure was the missing library.
	if out, err := run("LD_LIBRARY_PATH=" + libDir); err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("with LD_LIBRARY_PATH=%s the suite still fails: %v\n%s", libDir, err, out)
	}
}
