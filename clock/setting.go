package clock

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// SettingEnv names the environment variable that hands one Scaled clock to
// every locator process a test starts (the simulator, serve, the commands):
// a test aid, so that process tests cross the spec's 30-second windows and
// the broker's rate limits on virtual time. Ownership (leases, their
// renewals and trust) stays on the wall clock whatever it says, since a
// process stalls in real time. Never set it against a real broker.
const SettingEnv = "LOCATOR_TEST_CLOCK"

// Setting is s in the text form ParseSetting reads:
// "start=RFC3339&speed=N&wall=RFC3339": the clock read start at the wall
// instant wall and runs speed times faster. Every process that parses it
// reads the same time as s (to the wall clocks' agreement, one machine's).
func (s *Scaled) Setting() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return url.Values{
		"start": {s.start.UTC().Format(time.RFC3339Nano)},
		"speed": {strconv.FormatFloat(s.speed, 'g', -1, 64)},
		"wall":  {s.realAt.UTC().Format(time.RFC3339Nano)},
	}.Encode()
}

// ParseSetting makes the Scaled clock a Setting describes.
func ParseSetting(setting string) (*Scaled, error) {
	v, err := url.ParseQuery(setting)
	if err != nil {
		return nil, fmt.Errorf("clock setting %q: %v", setting, err)
	}
	start, err := time.Parse(time.RFC3339Nano, v.Get("start"))
	if err != nil {
		return nil, fmt.Errorf("clock setting %q: start: want an RFC 3339 instant", setting)
	}
	wall, err := time.Parse(time.RFC3339Nano, v.Get("wall"))
	if err != nil {
		return nil, fmt.Errorf("clock setting %q: wall: want an RFC 3339 instant", setting)
	}
	speed, err := strconv.ParseFloat(v.Get("speed"), 64)
	if err != nil || speed <= 0 || speed > 1000 {
		return nil, fmt.Errorf("clock setting %q: speed: want a number above 0, at most 1000", setting)
	}
	return &Scaled{start: start, realAt: wall, speed: speed}, nil
}
