package brokerclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Time is a broker timestamp. The spec warns that fractional precision
// varies (3 to 7 digits), that some rows are date-only, and that some fill
// rows carry a bare local time in execTime with no zone: Time parses all of
// them and says which it got.
type Time struct {
	time.Time
	// NoZone is set when the value carried no zone. Such values are kept as
	// read (in UTC for lack of better) and must not be compared with zoned
	// times; sort fills by tradeDate instead, as the spec says.
	NoZone bool
	// DateOnly is set for "2006-01-02" and midnight "2006-01-02T00:00:00".
	DateOnly bool
}

var zonedLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"}
var localLayouts = []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04"}

// ParseTime parses any timestamp form the broker sends.
func ParseTime(s string) (Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range zonedLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return Time{Time: t.UTC()}, nil
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return Time{Time: t, NoZone: true, DateOnly: true}, nil
	}
	for _, l := range localLayouts {
		if t, err := time.Parse(l, s); err == nil {
			midnight := t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
			return Time{Time: t, NoZone: true, DateOnly: midnight}, nil
		}
	}
	return Time{}, fmt.Errorf("unrecognised timestamp %q", s)
}

// UnmarshalJSON accepts a timestamp string, null or "".
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if s == "" {
		*t = Time{}
		return nil
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalJSON writes RFC 3339 for zoned values and the zone-less form otherwise.
func (t Time) MarshalJSON() ([]byte, error) {
	switch {
	case t.IsZero():
		return []byte("null"), nil
	case t.DateOnly:
		return json.Marshal(t.Format("2006-01-02T00:00:00"))
	case t.NoZone:
		return json.Marshal(t.Format("2006-01-02T15:04:05.999999999"))
	}
	return json.Marshal(t.UTC().Format(time.RFC3339Nano))
}

// ID is an identifier the broker sends as a string or as a JSON number
// (closed-position positionId, tradeId). It is always kept as the exact
// digits, so ids above 2^53 survive.
type ID string

// UnmarshalJSON accepts a string or a number literal.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*id = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = ID(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("id: %w", err)
		}
		*id = ID(n.String())
	}
	return nil
}

// String returns the id.
func (id ID) String() string { return string(id) }
