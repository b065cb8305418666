package brokersim_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
)

// BenchmarkSimulatorGET measures the simulator's throughput on loopback for
// simple authenticated GETs, with rate limits lifted by the scenario switch.
// The README quotes its req/s figure.
func BenchmarkSimulatorGET(b *testing.B) {
	for _, bc := range []struct{ name, path string }{
		{"inventory", "/v1/api/accounts/LV100001/locates/inventory"},
		{"accounts", "/v1/api/accounts"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sc := brokersim.DefaultScenario()
			sc.RateLimits = false
			sim, err := brokersim.New(sc, brokersim.WithClock(clock.Real{}))
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(sim)
			defer srv.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", srv.URL+bc.path, nil)
					req.Header.Set("TZ-API-KEY-ID", "SIMLIVEKEY01")
					req.Header.Set("TZ-API-SECRET-KEY", "sim-live-secret-01")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
