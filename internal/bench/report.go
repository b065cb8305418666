package bench

import (
	"fmt"
	"image/color"
	"runtime"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Report is one `locator bench` run, as written to JSON.
type Report struct {
	Command  string          `json:"command"`
	Date     string          `json:"date"`
	Host     Host            `json:"host"`
	Modes    []Mode          `json:"modes"`
	Store    StoreFigures    `json:"store"`
	MemoryMB float64         `json:"memoryMBPer1000LiveWorkflows"`
	Recovery RecoveryFigures `json:"recovery"`
	Targets  []Check         `json:"targets"`
}

// Host is where the figures were measured.
type Host struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
}

// ThisHost describes the running process's machine.
func ThisHost() Host {
	return Host{runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version()}
}

// Mode is the runs against one simulator: "in-process" on a sped-up clock
// (Speed > 1), or "locator sim" in real time.
type Mode struct {
	Name  string  `json:"name"`
	Speed float64 `json:"speed"`
	Runs  []Run   `json:"runs"`
}

// Check is one of the targets Report.Check holds the engine to (the rate
// floor, no 429, no offer lost, calls per fill) against what was measured.
type Check struct {
	Target string `json:"target"`
	Got    string `json:"got"`
	Met    bool   `json:"met"`
}

// Check fills r.Targets from the engine's runs and the other figures.
func (r *Report) Check() {
	r.Targets = nil
	add := func(target string, met bool, format string, args ...any) {
		r.Targets = append(r.Targets, Check{Target: target, Got: fmt.Sprintf(format, args...), Met: met})
	}
	for _, m := range r.Modes {
		for _, run := range m.Runs {
			if run.Runner != "engine" {
				continue
			}
			at := fmt.Sprintf(" (%s, N=%d)", m.Name, run.N)
			// The last offer's read and fill weigh on a short watchlist's
			// wall time: 1.02 holds from 100 symbols on.
			ratio := 1.10
			if run.N >= 100 {
				ratio = 1.02
			}
			add(fmt.Sprintf("wall ≤ %.2f × floor", ratio)+at, run.Ratio <= ratio, "%.3f × (%.2f s / %.2f s)", run.Ratio, run.Wall, run.Floor)
			add("0 responses 429"+at, run.Status429 == 0, "%d", run.Status429)
			add("0 offers lost"+at, run.Expired == 0 && run.Filled == run.N, "%d expired, %d of %d filled", run.Expired, run.Filled, run.N)
			// An offer is seen within one history read of settling (every
			// half second across its settle window) and accepted at once.
			add("offer → accept p50 ≤ 0.3 s, p99 ≤ 0.6 s"+at, run.OfferToAcceptP50 <= 0.3 && run.OfferToAcceptP99 <= 0.6,
				"%.3f s / %.3f s", run.OfferToAcceptP50, run.OfferToAcceptP99)
			// History: two reads a quote (quotes a second apart, their
			// windows read every half second), and the first window's and
			// the last fill's.
			c := run.CallsPerFill
			add("per fill ≤ 1 quote, 1 accept, 2.25 history, 1 inventory"+at,
				c["quote"] <= 1 && c["accept"] <= 1 && c["history"] <= 2.25 && c["inventory"] <= 1,
				"%.2f quote, %.2f accept, %.2f history, %.2f inventory", c["quote"], c["accept"], c["history"], c["inventory"])
		}
	}
	add("≥ 5,000 durable state changes/s", r.Store.GroupedPerSecond >= 5000, "%.0f/s grouped by %d (%.0f/s one per transaction), GOMAXPROCS %d",
		r.Store.GroupedPerSecond, r.Store.GroupSize, r.Store.SinglePerSecond, r.Host.GOMAXPROCS)
	if r.Recovery.Open == 0 {
		return // memory and recovery were not run (--workflows 0)
	}
	add("≤ 10 MB per 1,000 live workflows", r.MemoryMB <= 10, "%.2f MB", r.MemoryMB)
	add("recover 1,000 open workflows in ≤ 2 s plus one history read", r.Recovery.StartSeconds <= 2,
		"Start %.3f s + first history read %.3f s (%d open)", r.Recovery.StartSeconds, r.Recovery.FirstReadSeconds, r.Recovery.Open)
}

// Chart draws, per mode and N, each runner's wall time beside the floor.
func (r *Report) Chart(path string) error {
	p := plot.New()
	p.Title.Text = "Locating a watchlist: wall time against the floor"
	p.Y.Label.Text = "seconds (simulator clock)"
	var labels []string
	var floor, eng, naive plotter.Values
	for _, m := range r.Modes {
		byN := map[int]map[string]Run{}
		var ns []int
		for _, run := range m.Runs {
			if byN[run.N] == nil {
				byN[run.N] = map[string]Run{}
				ns = append(ns, run.N)
			}
			byN[run.N][run.Runner] = run
		}
		for _, n := range ns {
			labels = append(labels, fmt.Sprintf("%s\nN=%d", m.Name, n))
			floor = append(floor, max(byN[n]["engine"].Floor, byN[n]["naive"].Floor))
			eng = append(eng, byN[n]["engine"].Wall)
			naive = append(naive, byN[n]["naive"].Wall)
		}
	}
	w := vg.Points(14)
	for i, s := range []struct {
		name string
		v    plotter.Values
		c    color.RGBA
	}{
		{"floor", floor, color.RGBA{160, 160, 160, 255}},
		{"engine", eng, color.RGBA{31, 119, 180, 255}},
		{"naive loop", naive, color.RGBA{214, 39, 40, 255}},
	} {
		bars, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return err
		}
		bars.Color, bars.LineStyle.Width, bars.Offset = s.c, 0, vg.Length(i-1)*w
		p.Add(bars)
		p.Legend.Add(s.name, bars)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5 // room for the outer bars
	return p.Save(vg.Length(max(4, 2*len(labels)))*vg.Inch, 4*vg.Inch, path)
}
