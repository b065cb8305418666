package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startServe starts serve process p with its accounts file: every account,
// p's share of the key pairs first; gen counts the processes started in
// p's place before (a killed one is replaced), naming its log.
func (o FleetOptions) startServe(dir string, env []string, p, gen int) (*FleetProcess, error) {
	type entry struct {
		Account   string `json:"account"`
		KeyIDEnv  string `json:"keyIdEnv"`
		SecretEnv string `json:"secretEnv"`
	}
	var mine, others []entry
	for i := range o.Accounts {
		k := i % o.KeyPairs
		e := entry{FleetAccount(i), fmt.Sprintf("FLEET_KEY_%04d", k), fmt.Sprintf("FLEET_SECRET_%04d", k)}
		if k*o.Processes/o.KeyPairs == p {
			mine = append(mine, e)
		} else {
			others = append(others, e)
		}
	}
	b, err := json.Marshal(map[string]any{"accounts": append(mine, others...)})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("serve-%d.json", p))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Exe, "serve", "--standby", "--listen", "", "--config", path)
	cmd.Env = env
	log := io.Discard
	if o.LogDir != "" {
		name := fmt.Sprintf("serve-%d.log", p)
		if gen > 0 {
			name = fmt.Sprintf("serve-%d-%d.log", p, gen)
		}
		f, err := os.Create(filepath.Join(o.LogDir, name))
		if err != nil {
			return nil, err
		}
		log = f
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	proc := &FleetProcess{PID: cmd.Process.Pid, cmd: cmd, serving: make(chan struct{}), stderrDone: make(chan struct{})}
	go func() {
		defer close(proc.stderrDone)
		if f, ok := log.(io.Closer); ok {
			defer f.Close()
		}
		said := false
		for lines := bufio.NewScanner(stderr); lines.Scan(); {
			fmt.Fprintln(log, lines.Text())
			if strings.HasPrefix(lines.Text(), "goroutine ") && strings.HasSuffix(lines.Text(), ":") {
				proc.dumped++ // a goroutine's head in the runtime's SIGQUIT dump
			}
			if !said && slices.ContainsFunc([]string{"serving ", "standing by for ", "waiting for ", "not serving "}, func(p string) bool { return strings.HasPrefix(lines.Text(), p) }) {
				said = true
				close(proc.serving)
			}
		}
	}()
	return proc, nil
}

// goroutines ends the process with SIGQUIT and counts the goroutines of
// the runtime's dump (every goroutine's stack, each headed "goroutine N
// [state]:"): a serve has no other count of them to give without its
// dashboard, whose start reads every account.
func (p *FleetProcess) goroutines() (int, error) {
	if err := p.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return 0, fmt.Errorf("serve process %d: %w", p.PID, err)
	}
	select {
	case <-p.stderrDone:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.stderrDone
	}
	p.cmd.Wait()
	if p.dumped == 0 {
		return 0, fmt.Errorf("serve process %d dumped no goroutine on SIGQUIT", p.PID)
	}
	return p.dumped, nil
}

// stop ends the serve process as a user would (SIGTERM), and kills it
// when it has not ended in 30 s.
func (p *FleetProcess) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// alive reports whether the process still runs (from /proc/PID/stat: not
// gone, not a zombie).
func (p *FleetProcess) alive() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// cpu is the process's user + system time so far, in seconds (from
// /proc/PID/stat, in clock ticks of 1/100 s, Linux's USER_HZ).
func (p *FleetProcess) cpu() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		return 0, fmt.Errorf("serve process %d: %w (the fleet run reads /proc: Linux only)", p.PID, err)
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("serve process %d: /proc stat %q", p.PID, b)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) / 100, nil
}

// memory is the process's resident set and its high-water mark, in MB
// (from /proc/PID/status).
func (p *FleetProcess) memory() (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "VmRSS" {
			rss = kb / 1024
		} else {
			peak = kb / 1024
		}
	}
	return rss, peak, nil
}
