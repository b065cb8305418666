package chart

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/locatorhq/locator"
)

// Over few days the charts of `report --charts` hold their whole
// title, their first and last x labels sit inside the axis (half a
// category of room at each end), and the utilisation axis runs from 0 to
// 1 (it stopped at the tallest bar, 0.33).
func TestChartsFitFewDays(t *testing.T) {
	t.Parallel()
	day := func(d int) locator.ReportRow {
		return locator.ReportRow{Date: time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC)}
	}
	third := decimal.RequireFromString("0.3333")
	r := &locator.Report{Account: "LV100001", Range: locator.DateRange{From: day(24).Date, To: day(25).Date},
		Dates: []locator.ReportRow{day(24), day(25)},
		Symbols: []locator.ReportRow{{Symbol: "HTBX", Figures: locator.Figures{Utilisation: &third, Spend: decimal.NewFromInt(15)}},
			{Symbol: "HTBY", Figures: locator.Figures{Utilisation: &third, Spend: decimal.NewFromInt(9)}}},
		Days: []locator.ReportRow{{Date: day(24).Date, Symbol: "HTBX", Figures: locator.Figures{NetSpend: decimal.NewFromInt(15)}},
			{Date: day(25).Date, Symbol: "HTBY", Figures: locator.Figures{NetSpend: decimal.NewFromInt(9)}}},
	}
	for name, draw := range map[string]func(*locator.Report) (*plot.Plot, vg.Length){
		NetSpend: netSpendChart, Utilisation: utilisationChart, PricePer100: priceChart,
	} {
		p, w := draw(r)
		if tw := p.Title.TextStyle.Width(p.Title.Text); tw > w-vg.Inch/2 {
			t.Errorf("%s: title %.1f in wide on a %.1f in chart", name, float64(tw/vg.Inch), float64(w/vg.Inch))
		}
		n := len(r.Dates)
		if name == Utilisation {
			n = len(r.Symbols)
		}
		if p.X.Min > -0.5 || p.X.Max < float64(n)-0.5 {
			t.Errorf("%s: x axis %g..%g cuts the first or last of %d categories", name, p.X.Min, p.X.Max, n)
		}
		if name == Utilisation && (p.Y.Min != 0 || p.Y.Max < 1) {
			t.Errorf("utilisation axis %g..%g, want 0..1", p.Y.Min, p.Y.Max)
		}
	}
}

// A range with nothing located or shorted in it (a fresh account) draws
// its three charts, empty: `report --charts` panicked on it.
func TestChartsOfAnEmptyRange(t *testing.T) {
	t.Parallel()
	r := &locator.Report{Account: "LV100001", Range: locator.DateRange{From: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}}
	files, err := Write(r, t.TempDir())
	if err != nil || len(files) != 6 {
		t.Fatalf("charts of an empty range: %v, %v; want 6 files", files, err)
	}
}
