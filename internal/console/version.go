package console

import (
	"github.com/locatorhq/locator/internal/release"
	"github.com/locatorhq/locator/market"
)

// Version is the line people read of a build: "locator v1.2.3 (commit
// 0123456789ab of 2026-11-26 05:00:00 ET, modified; built 2026-11-26
// 09:00:00 ET; go1.26.8)", each part only when the build recorded it.
func Version(b release.Build) string {
	s := "locator " + b.Version + " ("
	if b.Commit != "" {
		s += "commit " + b.Commit[:min(12, len(b.Commit))]
		if !b.CommitTime.IsZero() {
			s += " of " + market.DateTime(b.CommitTime)
		}
		if b.Modified {
			s += ", modified"
		}
		s += "; "
	}
	if !b.BuildTime.IsZero() {
		s += "built " + market.DateTime(b.BuildTime) + "; "
	}
	return s + b.Go + ")"
}
