//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// Done-when "a 1.5 GiB body leaves the CLI under 300 MB
// RSS": the built binary's `locator accounts` against a broker that
// answers with 1.5 GiB of JSON account rows (streamed from one 128 KiB
// chunk, a row with a long nickname, without a Content-Length: 512 rows
// reach the 64 MiB bound within the cap of 1,000 rows, see
// TestCLIAnswerOfManyRowsPeakRSS) fails with the answer-too-large error,
// asks once, and the process's peak RSS (getrusage ru_maxrss, KiB on
// Linux) stays under 300 MB. The run has its own database, runtime and
// settings folders, so it never follows a running owner.
//
// The CLI is started by a small spawner (this test binary run afresh, see
// spawnPeakRSS), not by the test process itself: Linux counts in a child's
// ru_maxrss the peak RSS of the address space it replaced at exec, and Go
// starts children by vfork, so a child of this process would report this
// process's own peak (584 MB in the full suite, whatever the CLI used).
func TestCLIOversizedAnswerPeakRSS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := buildBinary(t)

	chunk := []byte(`{"accountId":"LV000001","accountType":"Margin","accountStatus":"Active","nickname":"` + strings.Repeat("x", 128<<10-100) + `"},`)
	const total = 3 << 29 // 1.5 GiB
	var requests atomic.Int32
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		n, _ := w.Write([]byte(`{"accounts":[`))
		written.Add(int64(n))
		w.(http.Flusher).Flush() // chunked: no Content-Length to refuse early
		for written.Load() < total && r.Context().Err() == nil {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)

	run := newPeakRun(t, dir, bin, []string{"LOCATOR_BASE_URL=" + srv.URL, "LOCATOR_KEY_ID=FIXTUREKEY", "LOCATOR_SECRET=fixture-secret"}, "accounts")
	cmd := run.cmd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("locator accounts: %v, want a failing exit\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "the broker's answer exceeded 67108864 bytes") {
		t.Errorf("stderr %q, want the answer-too-large error", stderr.String())
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: an oversized answer is not asked for again", n)
	}
	if w := written.Load(); w >= total {
		t.Errorf("the server wrote all %d bytes: the CLI read past its bound", w)
	}
	peakKiB, spawnerKiB := run.peak(t)
	if peak := peakKiB << 10; peak >= 300e6 {
		t.Errorf("peak RSS %d MB, want under 300 MB", peak/1e6)
	}
	// The spawner's own ru_maxrss is what the earlier measurement read: the
	// larger of this process's peak and the CLI's.
	direct := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	t.Logf("exit %d, stderr %q; server wrote %d MiB; the CLI's peak RSS %d MB (%d KiB, of which up to %d KiB the spawner's); the spawner's ru_maxrss %d KiB",
		cmd.ProcessState.ExitCode(), strings.TrimSpace(stderr.String()), written.Load()>>20, (peakKiB<<10)/1e6, peakKiB, spawnerKiB, direct)
}

// peakRun is a locator command run through the spawner (spawnPeakRSS) in
// a folder of its own, with its own database, runtime and settings
// folders (so it never follows a running owner), whose peak RSS is read
// once it has ended.
type peakRun struct {
	cmd  *exec.Cmd
	file string
}

// newPeakRun is the run of bin with args in dir (made by the caller), with
// env (the broker's address and keys, at least) besides its folders.
func newPeakRun(t *testing.T, dir, bin string, env []string, args ...string) *peakRun {
	t.Helper()
	home := filepath.Join(dir, "home")
	run := filepath.Join(dir, "run")
	for _, d := range []string{home, run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r := &peakRun{file: filepath.Join(dir, "peak")}
	r.cmd = exec.CommandContext(t.Context(), os.Args[0], append([]string{bin}, args...)...)
	r.cmd.Env = append([]string{
		spawnPeakEnv + "=" + r.file,
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_RUNTIME_DIR=" + run, "XDG_CONFIG_HOME=" + home,
		"LOCATOR_ACCOUNT=LV100001", "LOCATOR_DB=" + filepath.Join(dir, "locator.db"),
	}, env...)
	return r
}

// peak is the command's peak RSS (ru_maxrss, KiB) and the spawner's own
// before it started it (KiB), as the spawner wrote them.
func (r *peakRun) peak(t *testing.T) (peakKiB, spawnerKiB int64) {
	t.Helper()
	raw, err := os.ReadFile(r.file)
	if err != nil {
		t.Fatalf("the spawner wrote no figure: %v", err)
	}
	if _, err := fmt.Sscan(string(raw), &peakKiB, &spawnerKiB); err != nil {
		t.Fatalf("the spawner's figure %q: %v", raw, err)
	}
	return peakKiB, spawnerKiB
}

// spawnPeakEnv, set in the environment of this test binary, makes it
// spawnPeakRSS instead of a test run; it names the file the figures go to.
const spawnPeakEnv = "LOCATOR_TEST_PEAK_RSS_FILE"

// init turns this test binary into the spawner when spawnPeakEnv is set,
// before any test or TestMain runs.
func init() {
	if file := os.Getenv(spawnPeakEnv); file != "" {
		os.Exit(spawnPeakRSS(file, os.Args[1:]))
	}
}

// spawnPeakRSS runs args as a child with this process's standard streams
// and environment (less spawnPeakEnv), passing it on the SIGTERM this
// process gets (a daemon is stopped so), writes to file the child's peak
// RSS (ru_maxrss, KiB) and this process's own peak before the spawn
// (VmHWM, KiB: the most the child's figure can hold of the spawner's), and
// returns the child's exit code. A freshly started test binary is small,
// so the child's figure is its own to within a few MB.
func spawnPeakRSS(file string, args []string) int {
	own, err := ownPeakKiB()
	if err != nil {
		fmt.Fprintln(os.Stderr, "spawner:", err)
		return 125
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // ends with a killed test
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, spawnPeakEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "spawner:", err)
		return 125
	}
	go func() {
		for s := range term {
			cmd.Process.Signal(s)
		}
	}()
	if err := cmd.Wait(); cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "spawner:", err)
		return 125
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(file, fmt.Appendf(nil, "%d %d\n", peak, own), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "spawner:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// ownPeakKiB is this process's VmHWM: the peak RSS of its own address
// space, which, unlike ru_maxrss, does not hold its parent's.
func ownPeakKiB() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
