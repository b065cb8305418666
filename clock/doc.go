// Package clock is the one source of time for the engine, the poller, the
// store and the simulator: real, scaled (N times faster, from a chosen start)
// and fake (moved only by Advance). Sharing one Clock lets tests and the demo
// cross the spec's 30-second offer window without sleeping on the wall clock.
package clock
