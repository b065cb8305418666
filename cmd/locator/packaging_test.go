package main

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
)

// The Dockerfile builds a static binary and ships it on an empty base as a
// non-root user with its state on a volume; built the way the Dockerfile
// builds it, the binary has no dynamic loader and runs a locate (SQLite
// included) against its own simulator. The image itself is not built here:
// that needs a Docker daemon and the base images.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	d, err := readDockerfile()
	if err != nil {
		t.Fatal(err)
	}
	directives, froms, build := d.directives, d.froms, d.build
	if !strings.HasPrefix(build, "CGO_ENABLED=0 go build ") || !strings.HasSuffix(build, " ./cmd/locator") {
		t.Fatalf("the build stage's go build is %q; want CGO_ENABLED=0 go build ... ./cmd/locator", build)
	}
	if len(froms) < 2 || !strings.Contains(froms[0], " AS build") || froms[len(froms)-1] != "scratch" {
		t.Errorf("stages %q: want a build stage, then scratch", froms)
	}
	last := func(d string) string {
		if v := directives[d]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	if u := last("USER"); u == "" || u == "root" || strings.HasPrefix(u, "0") {
		t.Errorf("USER %q: want a non-root user", u)
	}
	if v := last("VOLUME"); !strings.Contains(v, "/var/lib/locator") {
		t.Errorf("VOLUME %q: want the state directory /var/lib/locator", v)
	}
	if e := last("ENTRYPOINT"); e != `["/usr/local/bin/locator"]` {
		t.Errorf("ENTRYPOINT %q: want locator", e)
	}
	env := strings.Join(directives["ENV"], " ")
	for _, want := range []string{"LOCATOR_DB=/var/lib/locator/", "ZONEINFO="} {
		if !strings.Contains(env, want) {
			t.Errorf("ENV %q: want %s", env, want)
		}
	}
	copies := strings.Join(directives["COPY"], "\n")
	for _, want := range []string{"ca-certificates.crt", "zoneinfo", "/etc/passwd", "/usr/local/bin/locator"} {
		if !strings.Contains(copies, want) {
			t.Errorf("the final stage copies no %s", want)
		}
	}

	if testing.Short() {
		t.Skip("-short: not building the static binary")
	}
	// The package's one binary is built with the Dockerfile's command
	// (buildBinary): the process tests run what ships.
	dir := t.TempDir()
	bin := buildBinary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v)", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs %q", libs)
	}

	// The build command stamps the build's time, which
	// version shows.
	v, err := exec.Command(bin, "version", "--json").Output()
	var stamped struct{ BuildTime time.Time }
	if err != nil || json.Unmarshal(v, &stamped) != nil || time.Since(stamped.BuildTime) > time.Hour || time.Since(stamped.BuildTime) < 0 {
		t.Errorf("the static binary's version: %v %s; want this build's time", err, v)
	}

	// The static binary runs: its simulator, then a locate recorded in SQLite.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sim := exec.CommandContext(ctx, bin, "sim", "--addr", "127.0.0.1:0")
	out, err := sim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Process.Signal(os.Interrupt); sim.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	var ready brokersim.Ready
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatal(err)
	}
	locate := exec.CommandContext(ctx, bin, "locate", "HTBX", "100", "--max-price", "0.02", "--json")
	locate.Env = append(os.Environ(), "LOCATOR_BASE_URL="+ready.BaseURL, "LOCATOR_KEY_ID="+ready.Keys[0].KeyID,
		"LOCATOR_SECRET="+ready.Keys[0].Secret, "LOCATOR_ACCOUNT="+ready.Keys[0].Accounts[0],
		"LOCATOR_DB="+filepath.Join(dir, "state", "locator.db"))
	got, err := locate.Output()
	if err != nil || !strings.Contains(string(got), `"state":"filled"`) {
		t.Errorf("the static binary's locate: %v\n%s", err, got)
	}
}

// dockerfile is what the tests read of the Dockerfile: its directives by
// name (continuation lines joined, comments dropped), its stages' FROM
// lines and the build stage's go build command.
type dockerfile struct {
	directives map[string][]string
	froms      []string
	build      string
}

func readDockerfile() (dockerfile, error) {
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		return dockerfile{}, err
	}
	d := dockerfile{directives: map[string][]string{}}
	var cur string
	for l := range strings.SplitSeq(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur += s
			continue
		}
		cur += l
		if f := strings.Fields(cur); len(f) > 0 {
			rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cur), f[0]))
			d.directives[f[0]] = append(d.directives[f[0]], rest)
			switch {
			case f[0] == "FROM":
				d.froms = append(d.froms, rest)
			case f[0] == "RUN" && strings.Contains(rest, "go build"):
				d.build = rest
			}
		}
		cur = ""
	}
	return d, nil
}

// binary is the package's locator binary, built once per `go test` run
// (buildBinary) and removed by TestMain.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildBinary builds locator once for the whole package run, with the
// Dockerfile's own build command (static, stamped), and returns its path;
// every process test runs that binary.
func buildBinary(tb testing.TB) string {
	tb.Helper()
	binary.once.Do(func() {
		d, err := readDockerfile()
		if err != nil {
			binary.err = err
			return
		}
		if binary.dir, binary.err = os.MkdirTemp("", "locator-test-bin-"); binary.err != nil {
			return
		}
		bin := filepath.Join(binary.dir, "locator")
		cmdline := strings.Replace(d.build, "-o /out/locator", "-o "+bin, 1)
		if cmdline == d.build {
			binary.err = fmt.Errorf("the Dockerfile's go build %q does not write /out/locator", d.build)
			return
		}
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("%s: %v\n%s", cmdline, err, out)
			return
		}
		binary.path = bin
	})
	if binary.err != nil {
		tb.Fatalf("build: %v", binary.err)
	}
	return binary.path
}

// removeBinary removes what buildBinary built.
func removeBinary() {
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
}

// unitFile is a systemd unit: section -> key -> values, in order.
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, path string) unitFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unitFile{}
	section := ""
	for i, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = l[1 : len(l)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not KEY=value in a section", path, i+1, l)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// The example systemd unit runs the daemon with its keys from an
// EnvironmentFile (never on the command line), restarts it on failure, runs
// it unprivileged and hardened, and passes `systemd-analyze verify` where
// that is installed.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	const path = "../../contrib/systemd/locator.service"
	u := parseUnit(t, path)
	svc := u["Service"]
	one := func(k string) string {
		if v := svc[k]; len(v) == 1 {
			return v[0]
		}
		t.Errorf("[Service] %s: %q, want one value", k, svc[k])
		return ""
	}
	exec0 := one("ExecStart")
	if !regexp.MustCompile(`^/\S+/locator run --config /\S+$`).MatchString(exec0) {
		t.Errorf("ExecStart=%s: want locator run --config FILE", exec0)
	}
	for k, want := range map[string]string{
		"EnvironmentFile": "/etc/locator/locator.env", "Restart": "on-failure", "StateDirectory": "locator",
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
	} {
		if got := one(k); got != want {
			t.Errorf("[Service] %s=%s, want %s", k, got, want)
		}
	}
	if user := one("User"); user == "" || user == "root" {
		t.Errorf("User=%s: want an unprivileged user", user)
	}
	for _, e := range svc["Environment"] {
		if strings.Contains(e, "SECRET") || strings.Contains(e, "KEY_ID") {
			t.Errorf("Environment=%s: keys belong in the EnvironmentFile", e)
		}
	}
	if !slices.Contains(u["Install"]["WantedBy"], "multi-user.target") {
		t.Error("[Install] WantedBy=multi-user.target missing")
	}
	// The example environment file names the CLI's variables, and only them.
	raw, err := os.ReadFile("../../contrib/systemd/locator.env.example")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for l := range strings.SplitSeq(string(raw), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, _, _ := strings.Cut(l, "=")
		names = append(names, k)
	}
	if want := []string{"LOCATOR_BASE_URL", "LOCATOR_ACCOUNT", "LOCATOR_KEY_ID", "LOCATOR_SECRET"}; !slices.Equal(names, want) {
		t.Errorf("locator.env.example sets %q, want %q", names, want)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified")
		return
	}
	// verify wants ExecStart's program to exist: point it at this test binary.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prog, _, _ := strings.Cut(exec0, " ")
	tmp := filepath.Join(t.TempDir(), "locator.service")
	if err := os.WriteFile(tmp, []byte(strings.ReplaceAll(string(unit), "ExecStart="+prog, "ExecStart="+self)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Unknown keys and bad values are only warnings: any output fails.
	if out, err := exec.Command(analyze, "verify", tmp).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
