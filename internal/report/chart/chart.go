// Package chart draws a spend report's charts (`locator report --charts`):
// apart from package report, so that what reads a report (the library, the
// daemon, the jobs) links no plotting.
package chart

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/locatorhq/locator"
)

// Chart file names, each written as .png and .svg.
const (
	NetSpend    = "net-spend"     // daily net spend, stacked by symbol
	Utilisation = "utilisation"   // utilisation by symbol over the range
	PricePer100 = "price-per-100" // price per 100 located shares over time
)

// Write draws the report's three charts into dir as PNG and SVG and
// returns the files written. Figures become float64 here, for the plots
// only.
func Write(r *locator.Report, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, c := range []struct {
		name string
		draw func(*locator.Report) (*plot.Plot, vg.Length)
	}{{NetSpend, netSpendChart}, {Utilisation, utilisationChart}, {PricePer100, priceChart}} {
		p, width := c.draw(r)
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, c.name+ext)
			if err := p.Save(width, 4*vg.Inch, path); err != nil {
				return files, fmt.Errorf("chart %s: %w", path, err)
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// dayLabels are the range's dates with activity, as MM-DD in New York.
func dayLabels(r *locator.Report) []string {
	out := make([]string, len(r.Dates))
	for i, d := range r.Dates {
		out[i] = d.Date.Format("01-02")
	}
	return out
}

// title names the chart, its account and range; dates are New York's.
func title(p *plot.Plot, what string, r *locator.Report) {
	p.Title.Text = fmt.Sprintf("%s, %s, %s (New York dates)", what, r.Account, r.Range)
}

func width(n int) vg.Length { return vg.Length(max(6, float64(n)*0.45)) * vg.Inch }

// nominalX names the x axis's categories; a range with none (nothing
// located or shorted in it) gets an empty axis (gonum's NominalX panics on
// no names).
func nominalX(p *plot.Plot, names []string) {
	if len(names) > 0 {
		p.NominalX(names...)
	}
}

// frame fits a chart of n categories (days or symbols) on a nominal x
// axis: half a category of room at each end, so the first and last labels
// and bars are whole, and a width (at least w) that holds the whole title.
func frame(p *plot.Plot, n int, w vg.Length) vg.Length {
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	return max(w, p.Title.TextStyle.Width(p.Title.Text)+vg.Inch)
}

func netSpendChart(r *locator.Report) (*plot.Plot, vg.Length) {
	p := plot.New()
	title(p, "Daily net locate spend by symbol ($)", r)
	p.Y.Label.Text = "net spend ($)"
	index := map[time.Time]int{}
	for i, d := range r.Dates {
		index[d.Date] = i
	}
	w := vg.Points(12)
	var below *plotter.BarChart
	for i, s := range r.Symbols {
		if s.Spend.IsZero() && s.Recovery.IsZero() {
			continue // nothing to stack
		}
		v := make(plotter.Values, len(r.Dates))
		for _, d := range r.Days {
			if d.Symbol == s.Symbol {
				v[index[d.Date]], _ = d.NetSpend.Float64()
			}
		}
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			continue // an empty range: nothing to stack
		}
		bars.Color, bars.LineStyle.Width = plotutil.Color(i), 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(s.Symbol, bars)
	}
	p.Legend.Top = true
	p.Y.Max *= 1.25 // room for the legend above the tallest bar
	nominalX(p, dayLabels(r))
	return p, frame(p, len(r.Dates), width(len(r.Dates)))
}

func utilisationChart(r *locator.Report) (*plot.Plot, vg.Length) {
	p := plot.New()
	title(p, "Utilisation by symbol (shorted ÷ located)", r)
	p.Y.Label.Text = "utilisation"
	v := make(plotter.Values, len(r.Symbols))
	names := make([]string, len(r.Symbols))
	for i, s := range r.Symbols {
		names[i] = s.Symbol
		if s.Utilisation != nil {
			v[i], _ = s.Utilisation.Float64()
		}
	}
	if bars, err := plotter.NewBarChart(v, vg.Points(24)); err == nil {
		bars.Color, bars.LineStyle.Width = color.RGBA{R: 31, G: 119, B: 180, A: 255}, 0
		p.Add(bars)
	}
	// A fraction of the located shares: the axis runs 0 to 1 (further when
	// more was shorted than located), not to the tallest bar.
	p.Y.Min, p.Y.Max = 0, max(1, p.Y.Max)
	nominalX(p, names)
	return p, frame(p, len(r.Symbols), width(2*len(r.Symbols)))
}

func priceChart(r *locator.Report) (*plot.Plot, vg.Length) {
	p := plot.New()
	title(p, "Price per 100 located shares ($)", r)
	p.Y.Label.Text = "$ per 100 shares"
	index := map[time.Time]int{}
	for i, d := range r.Dates {
		index[d.Date] = i
	}
	for i, s := range r.Symbols {
		var pts plotter.XYs
		for _, d := range r.Days {
			if d.Symbol == s.Symbol && d.PricePer100 != nil {
				y, _ := d.PricePer100.Float64()
				pts = append(pts, plotter.XY{X: float64(index[d.Date]), Y: y})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			continue
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		p.Add(line, points)
		p.Legend.Add(s.Symbol, line, points)
	}
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.25
	nominalX(p, dayLabels(r))
	return p, frame(p, len(r.Dates), width(len(r.Dates)))
}
