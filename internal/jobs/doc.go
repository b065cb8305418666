// Package jobs holds the scheduled work of locator's daemon (`locator run`)
// as plain values: a config parsed and checked up front (ParseConfig),
// schedules that are values with Next in the market's time zone
// (ParseSchedule), and job bodies that are plain methods taking a context
// (Runner.Locate, CreditBackUnused, LedgerSync, Reconcile), so tests call
// them directly on a fake clock. Runner.Run records each run in the store's
// job_runs and hands a failed run or a fee problem to the notifier (package
// notify). The robfig runner that fires them on schedule, with its recover
// and skip-if-still-running wrappers, is wired only in cmd/locator.
//
// Schedules keep the exchange's calendar (package market): a cron spec
// never fires on an NYSE holiday, and @open/@close schedules (@close-15m)
// follow each trading day's session, early closes included. Nobody trades
// on a holiday, so a run that lands on one anyway (--once on Thanksgiving)
// is recorded as skipped, not run and not failed.
//
// Every body is safe to run again: after a restart or on the next tick it
// adopts the workflows an earlier run left open instead of duplicating them,
// and the engine's ensure semantics answer "covered" for what the inventory
// already holds, so nothing is quoted or credited back twice.
package jobs
