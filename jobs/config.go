package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/answerlink"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/notify"
	"github.com/locatorhq/locator/workflow"
)

// Market is the time zone schedules run in: the spec's session hours are
// Eastern Time, so "0 0 9 * * MON-FRI" means 9:00 in New York whatever the
// host's zone. It is the market package's zone, not a second definition.
var Market = market.NewYork

// Parser parses cron schedules: six fields with seconds first, plus
// descriptors such as @hourly and "@every 10s". cmd/locator hands the same
// parser to the robfig runner, so a spec means one thing everywhere. The
// session schedules (@open, @close) are ParseSchedule's, not the parser's.
var Parser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Schedule is a parsed schedule in the Market zone: a value with Next, so
// tests step through it on a fake clock and the robfig runner takes it as a
// cron.Schedule. It follows the exchange's calendar (package market): a
// cron schedule never fires on an exchange holiday (unless RunOnHolidays),
// and a session schedule fires once a trading day, relative to that day's
// open or close, so an early close moves it.
type Schedule struct {
	// Spec is the text it was parsed from.
	Spec string
	// RunOnHolidays lets a cron schedule fire on exchange holidays too (a
	// job's "holidays": "run"); session schedules never do, having no
	// session then.
	RunOnHolidays bool

	cron   cron.Schedule // nil for a session schedule
	anchor string        // "open" or "close" for a session schedule
	offset time.Duration // from the anchor
}

var _ cron.Schedule = Schedule{}

// sessionSpec is a session schedule: @open or @close, optionally shifted by
// a signed duration (@close-15m, @open+5m, @close-1h30m).
var sessionSpec = regexp.MustCompile(`^@(open|close)([+-].+)?$`)

// ParseSchedule parses spec in the Market zone: six cron fields (seconds
// first) or a robfig descriptor, or a session schedule such as @close-15m.
// A TZ= prefix is refused: every schedule is market time.
func ParseSchedule(spec string) (Schedule, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return Schedule{}, errors.New("empty schedule")
	}
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return Schedule{}, fmt.Errorf("schedule %q: schedules run in %s; drop the time-zone prefix", spec, Market)
	}
	if m := sessionSpec.FindStringSubmatch(s); m != nil {
		return parseSession(s, m[1], m[2])
	}
	sched, err := Parser.Parse(s)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(s, "@") && len(strings.Fields(s)) != 6 {
			msg += ` (six fields, seconds first: e.g. "0 0 9 * * MON-FRI"; or @open, @close-15m)`
		}
		return Schedule{}, fmt.Errorf("schedule %q: %s", spec, msg)
	}
	if ss, ok := sched.(*cron.SpecSchedule); ok && ss.Location == time.Local {
		ss.Location = Market
	}
	return Schedule{Spec: s, cron: sched}, nil
}

// parseSession checks that the shifted time stays on the session's own date
// for a full day and an early close alike, so "the run of a trading day" is
// never on a day the exchange is closed.
func parseSession(s, anchor, shift string) (Schedule, error) {
	var off time.Duration
	if shift != "" {
		var err error
		if off, err = time.ParseDuration(shift); err != nil {
			return Schedule{}, fmt.Errorf("schedule %q: %q is not a duration such as -15m or +1h30m", s, shift)
		}
	}
	// Minutes from midnight: the open, or the earliest and latest closes.
	lo, hi := 9*time.Hour+30*time.Minute, 9*time.Hour+30*time.Minute
	if anchor == "close" {
		lo, hi = 13*time.Hour, 16*time.Hour
	}
	if lo+off < 0 || hi+off >= 24*time.Hour {
		return Schedule{}, fmt.Errorf("schedule %q: the shift moves the run off the session's day (keep %s%s between 00:00 and 24:00)", s, "@"+anchor, shift)
	}
	return Schedule{Spec: s, anchor: anchor, offset: off}, nil
}

// Next returns the first activation strictly after t on a day the schedule
// runs (zero if none within five years), in t's location.
func (s Schedule) Next(t time.Time) time.Time {
	horizon := t.AddDate(5, 0, 0)
	if s.anchor != "" {
		for day := market.On(t); day.Date.Before(horizon); day = market.Next(day.Date) {
			if !day.Trading() {
				continue
			}
			at := day.Open
			if s.anchor == "close" {
				at = day.Close
			}
			if at = at.Add(s.offset); at.After(t) {
				return at.In(t.Location())
			}
		}
		return time.Time{}
	}
	if s.cron == nil {
		return time.Time{}
	}
	for next := s.cron.Next(t); !next.IsZero() && next.Before(horizon); next = s.cron.Next(next) {
		if _, skip := s.Skips(next); !skip {
			return next
		}
		// Resume the search at the end of the closed day: the last whole
		// second before the next midnight (cron works in whole seconds).
		next = market.On(next).Date.AddDate(0, 0, 1).Add(-time.Second).In(next.Location())
	}
	return time.Time{}
}

// Skips reports whether a run at t is skipped because the market is closed
// that day, and why ("market closed: Thanksgiving Day"): a cron schedule
// skips exchange holidays (weekends are its own fields' business), a
// session schedule every day without a session.
func (s Schedule) Skips(t time.Time) (string, bool) {
	day := market.On(t)
	switch {
	case s.anchor != "" && !day.Trading():
		return "market closed: " + day.Closed(), true
	case s.cron != nil && !s.RunOnHolidays && day.Holiday != "":
		return "market closed: " + day.Holiday, true
	}
	return "", false
}

// String returns the spec.
func (s Schedule) String() string { return s.Spec }

// Kind is what a job does.
type Kind string

// Job kinds.
const (
	// KindLocate ensures Quantity located shares of each symbol, accepting
	// offers within Policy without asking (pre-market locates for a
	// watchlist).
	KindLocate Kind = "locate"
	// KindCreditBackUnused credits back every located share not tied to a
	// short (end of day): Locate and PreBorrow rows' available shares in whole
	// lots, and SingleUse rows only when never used (ledger.Unused, as
	// `locator credit-back --all`).
	KindCreditBackUnused Kind = "credit-back-unused"
	// KindLedgerSync pulls the last Days days of the cash ledger into the
	// store.
	KindLedgerSync Kind = "ledger-sync"
	// KindReconcile matches locate fees in the ledger to the store's locates
	// over the last Days days.
	KindReconcile Kind = "reconcile"
	// KindAudit writes the Reg SHO audit trail of the last Days trading days
	// (default 1: the day) to the folder Dir, as CSV and JSON lines
	// (report.WriteTrail), and fails when a short sale was sent without cover.
	KindAudit Kind = "audit"
)

// Kinds lists the job kinds, for messages and docs.
func Kinds() []Kind {
	return []Kind{KindLocate, KindCreditBackUnused, KindLedgerSync, KindReconcile, KindAudit}
}

// Defaults for the optional fields.
const (
	DefaultDays  = 7
	DefaultGrace = ledger.FeeGrace
	maxDays      = 3650
)

// Job is one configured job.
type Job struct {
	Name     string
	Kind     Kind
	Schedule Schedule
	// Line is where the job's object starts in the config file.
	Line int

	// locate
	Symbols  []string
	Quantity int64
	// Policy is the cost policy, always with AutoAccept: nobody is there to
	// be asked.
	Policy workflow.Policy

	// ledger-sync and reconcile: the window is the last Days trade dates,
	// today included.
	Days int
	// reconcile: how long a filled locate's fee may be absent from the
	// ledger before it is reported missing.
	Grace time.Duration
	// audit: the folder the trail is written to (required).
	Dir string
}

// Config is a parsed daemon config.
type Config struct {
	// Jobs are in file order; names are unique.
	Jobs []Job
	// Webhooks are told of failed runs and fee problems (the config's
	// "notify": {"webhooks": [...]}), and of offers waiting on a person
	// when they ask ("events"); each names the environment variable
	// holding its URL, never the URL.
	Webhooks []notify.Webhook
	// Links are how the offers' signed answer links are made ("notify":
	// {"links": {"baseURL", "secretEnv"}}); nil: none, and no webhook may
	// ask for offers.
	Links *answerlink.Config
}

// Job is the job named name; the error names the jobs there are.
func (c *Config) Job(name string) (Job, error) {
	var names []string
	for _, j := range c.Jobs {
		if j.Name == name {
			return j, nil
		}
		names = append(names, j.Name)
	}
	return Job{}, fmt.Errorf("no job %q in the config (jobs: %s)", name, strings.Join(names, ", "))
}

// ConfigError is a config refused at start, with the line it concerns.
type ConfigError struct {
	// Line is 1-based.
	Line int
	// Msg says what is wrong and, where it helps, what is wanted.
	Msg string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// fields allowed per kind (besides name, kind and schedule).
var kindFields = map[Kind][]string{
	KindLocate:           {"symbols", "quantity", "policy"},
	KindCreditBackUnused: {},
	KindLedgerSync:       {"days"},
	KindReconcile:        {"days", "grace"},
	KindAudit:            {"days", "dir"},
}

var allFields = []string{"name", "kind", "schedule", "holidays", "symbols", "quantity", "policy", "days", "grace", "dir"}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseConfig parses a daemon config:
//
//	{"jobs": [{"name": "...", "kind": "...", "schedule": "...", ...}, ...],
//	 "notify": {"webhooks": [{"urlEnv": "NAME", "format": "json", "events": [...]}, ...],
//	            "links": {"baseURL": "https://...", "secretEnv": "NAME"}}}
//
// and checks everything a run would need, so a mistake is refused at start
// (with the line it is on) rather than at 9:00 the next morning. Unknown
// fields, fields of another kind, duplicate keys or names, and schedules
// that never fire are refused too.
func ParseConfig(data []byte) (*Config, error) { return parseConfig(data, true) }

// ParseNotify parses a config for its "notify" block alone (serve's
// --notify): a run config, whose jobs are then parsed and left aside, or a
// file holding that block only.
func ParseNotify(data []byte) (*Config, error) { return parseConfig(data, false) }

func parseConfig(data []byte, needJobs bool) (*Config, error) {
	p := &parser{data: data}
	// One pass with json.Decoder finds syntax errors, with their offset.
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, p.syntaxError(err)
	}
	if rest := skipSpace(data, int(dec.InputOffset())); rest < len(data) {
		return nil, p.errAt(rest, "unexpected text after the end of the config object")
	}
	top, err := p.object(data, 0, "the config")
	if err != nil {
		return nil, err
	}
	var jobsField, notifyField *field
	for i, f := range top {
		switch f.key {
		case "jobs":
			jobsField = &top[i]
		case "notify":
			notifyField = &top[i]
		default:
			return nil, p.errAt(f.off, "unknown field %q (the config holds \"jobs\" and \"notify\"; account settings come from the environment or flags)", f.key)
		}
	}
	cfg := &Config{}
	if jobsField == nil && !needJobs {
		if notifyField == nil {
			return nil, p.errAt(skipSpace(data, 0), `no "notify" block`)
		}
		return cfg, p.notify(*notifyField, cfg)
	}
	if jobsField == nil {
		return nil, p.errAt(skipSpace(data, 0), `no "jobs" list`)
	}
	elems, err := p.array(jobsField.value, jobsField.voff, `"jobs"`)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, p.errAt(jobsField.voff, `"jobs" is empty`)
	}
	names := map[string]int{}
	for _, el := range elems {
		j, err := p.job(el)
		if err != nil {
			return nil, err
		}
		if first, dup := names[j.Name]; dup {
			return nil, &ConfigError{Line: j.Line, Msg: fmt.Sprintf("job name %q is already used by the job on line %d", j.Name, first)}
		}
		names[j.Name] = j.Line
		cfg.Jobs = append(cfg.Jobs, j)
	}
	if notifyField != nil {
		if err := p.notify(*notifyField, cfg); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// notify parses "notify": {"webhooks": [...], "links": {...}}: a webhook
// that asks for offers needs the links they carry.
func (p *parser) notify(nf field, cfg *Config) error {
	top, err := p.object(nf.value, nf.voff, `"notify"`)
	if err != nil {
		return err
	}
	var list, links *field
	for i, f := range top {
		switch f.key {
		case "webhooks":
			list = &top[i]
		case "links":
			links = &top[i]
		default:
			return p.errAt(f.off, "unknown field %q in \"notify\" (want \"webhooks\", \"links\")", f.key)
		}
	}
	if list == nil {
		return p.errAt(nf.voff, `"notify" has no "webhooks" list`)
	}
	if cfg.Webhooks, err = p.webhooks(*list); err != nil {
		return err
	}
	if links != nil {
		if cfg.Links, err = p.links(*links); err != nil {
			return err
		}
	}
	for _, w := range cfg.Webhooks {
		if w.Wants(notify.OfferWaiting) && cfg.Links == nil {
			return p.errAt(list.voff, "webhook %s asks for %s, which carry answer links: add \"links\": {\"baseURL\": ..., \"secretEnv\": ...} to \"notify\"", w.URLEnv, notify.OfferWaiting)
		}
	}
	return nil
}

// links parses "links": {"baseURL": "https://...", "secretEnv": "NAME"}:
// the dashboard's address as a phone reaches it, and the variable holding
// the secret the links are signed with (never the secret).
func (p *parser) links(f field) (*answerlink.Config, error) {
	fields, err := p.object(f.value, f.voff, `"links"`)
	if err != nil {
		return nil, err
	}
	c := &answerlink.Config{}
	for _, k := range fields {
		var dst *string
		switch k.key {
		case "baseURL":
			dst = &c.BaseURL
		case "secretEnv":
			dst = &c.SecretEnv
		case "secret":
			return nil, p.errAt(k.off, "links: a secret does not belong in the config: put it in an environment variable and name that in \"secretEnv\"")
		default:
			return nil, p.errAt(k.off, "unknown links field %q (want baseURL, secretEnv)", k.key)
		}
		if json.Unmarshal(k.value, dst) != nil {
			return nil, p.errAt(k.voff, "links %s must be a string", k.key)
		}
	}
	if err := c.Check(); err != nil {
		return nil, p.errAt(f.voff, "%v", err)
	}
	return c, nil
}

// webhooks parses "webhooks": [{"urlEnv": "NAME", "format":
// "json"|"slack"|"ntfy", "events": [...]}, ...]. A "url" field is refused
// with the reason, and no message quotes a value that could be the URL.
func (p *parser) webhooks(list field) ([]notify.Webhook, error) {
	elems, err := p.array(list.value, list.voff, `"webhooks"`)
	if err != nil {
		return nil, err
	}
	var out []notify.Webhook
	for _, el := range elems {
		fields, err := p.object(el.value, el.off, fmt.Sprintf("the webhook on line %d", p.line(el.off)))
		if err != nil {
			return nil, err
		}
		w := notify.Webhook{Format: notify.FormatJSON}
		envOff, formatOff, eventsOff := -1, -1, -1
		for _, f := range fields {
			switch f.key {
			case "urlEnv":
				envOff = f.voff
				if json.Unmarshal(f.value, &w.URLEnv) != nil {
					return nil, p.errAt(f.voff, "webhook urlEnv must be a string: the name of an environment variable")
				}
			case "format":
				formatOff = f.voff
				var s string
				if err := p.decodeField("webhook", f, &s, "a string"); err != nil {
					return nil, err
				}
				w.Format = notify.Format(s)
			case "events":
				eventsOff = f.voff
				if err := p.decodeField("webhook", f, &w.Events, "a list of event kinds"); err != nil {
					return nil, err
				}
			case "url":
				return nil, p.errAt(f.off, "webhook: a URL does not belong in the config (a webhook URL is a secret): put it in an environment variable and name that in \"urlEnv\"")
			default:
				return nil, p.errAt(f.off, "unknown webhook field %q (want urlEnv, format, events)", f.key)
			}
		}
		if envOff < 0 {
			return nil, p.errAt(el.off, "webhook has no \"urlEnv\" (the environment variable holding its URL)")
		}
		if err := (notify.Webhook{URLEnv: w.URLEnv, Format: notify.FormatJSON}).Check(); err != nil {
			return nil, p.errAt(envOff, "webhook: %v", err)
		}
		if err := (notify.Webhook{URLEnv: w.URLEnv, Format: w.Format}).Check(); err != nil {
			return nil, p.errAt(formatOff, "webhook: %v", err)
		}
		if err := w.Check(); err != nil {
			return nil, p.errAt(eventsOff, "webhook: %v", err)
		}
		out = append(out, w)
	}
	return out, nil
}

// parser keeps the whole file to turn offsets into lines.
type parser struct{ data []byte }

// line is the 1-based line of the byte at off.
func (p *parser) line(off int) int {
	off = max(0, min(off, len(p.data)))
	return 1 + bytes.Count(p.data[:off], []byte("\n"))
}

func (p *parser) errAt(off int, format string, args ...any) error {
	return &ConfigError{Line: p.line(off), Msg: fmt.Sprintf(format, args...)}
}

// syntaxError places a decoder error: a SyntaxError's offset counts the
// offending byte, so the line is that of the byte before it.
func (p *parser) syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return p.errAt(int(se.Offset)-1, "invalid JSON: %v", se)
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(p.data)) == 0:
		return &ConfigError{Line: 1, Msg: "the config is empty"}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		end := len(bytes.TrimRight(p.data, " \t\r\n"))
		return p.errAt(end, "invalid JSON: unexpected end of file (an unclosed brace, bracket or string)")
	}
	return &ConfigError{Line: 1, Msg: err.Error()}
}

// field is one key of a JSON object, with absolute offsets of the key and
// of its value.
type field struct {
	key   string
	off   int
	value json.RawMessage
	voff  int
}

// object splits an object found at base into its fields, refusing
// duplicate keys (encoding/json would silently keep the last one).
func (p *parser) object(raw []byte, base int, what string) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, p.errAt(base+skipSpace(raw, 0), "%s must be an object, not %s", what, describe(tok))
	}
	var out []field
	seen := map[string]int{}
	for dec.More() {
		koff := base + skipSep(raw, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		key, _ := tok.(string)
		voff := base + skipSep(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, p.syntaxError(err)
		}
		if first, dup := seen[key]; dup {
			return nil, p.errAt(koff, "field %q appears twice in %s (first on line %d)", key, what, p.line(first))
		}
		seen[key] = koff
		out = append(out, field{key: key, off: koff, value: v, voff: voff})
	}
	return out, nil
}

// element is one value of a JSON array with its absolute offset.
type element struct {
	value json.RawMessage
	off   int
}

func (p *parser) array(raw []byte, base int, what string) ([]element, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, p.errAt(base+skipSpace(raw, 0), "%s must be a list, not %s", what, describe(tok))
	}
	var out []element
	for dec.More() {
		off := base + skipSep(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, p.syntaxError(err)
		}
		out = append(out, element{value: v, off: off})
	}
	return out, nil
}

// describe names a JSON token's type for messages.
func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "a list"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// decodeField decodes f's value into dst, turning a type mismatch into a
// message about the field.
func (p *parser) decodeField(job string, f field, dst any, want string) error {
	if err := json.Unmarshal(f.value, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return p.errAt(f.voff, "job %s: %s must be %s, not %s", job, f.key, want, jsonKind(te.Value))
		}
		return p.errAt(f.voff, "job %s: %s must be %s: %v", job, f.key, want, err)
	}
	return nil
}

func jsonKind(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string", "number", "bool":
		if v == "bool" {
			return "a boolean"
		}
		return "a " + v
	}
	return v
}

// job parses and checks one element of "jobs".
func (p *parser) job(el element) (Job, error) {
	j := Job{Line: p.line(el.off)}
	fields, err := p.object(el.value, el.off, fmt.Sprintf("the job on line %d", j.Line))
	if err != nil {
		return j, err
	}
	byKey := map[string]field{}
	for _, f := range fields {
		if !slices.Contains(allFields, f.key) {
			return j, p.errAt(f.off, "unknown field %q (want one of %s)", f.key, strings.Join(allFields, ", "))
		}
		byKey[f.key] = f
	}
	label := fmt.Sprintf("on line %d", j.Line)
	// name, kind and schedule are required and checked first.
	f, ok := byKey["name"]
	if !ok {
		return j, p.errAt(el.off, "job %s has no \"name\"", label)
	}
	if err := p.decodeField(label, f, &j.Name, "a string"); err != nil {
		return j, err
	}
	if !namePattern.MatchString(j.Name) {
		return j, p.errAt(f.voff, "job name %q: use letters, digits, '.', '_' and '-' (it is typed after --once)", j.Name)
	}
	label = fmt.Sprintf("%q", j.Name)
	f, ok = byKey["kind"]
	if !ok {
		return j, p.errAt(el.off, "job %s has no \"kind\" (want one of %s)", label, kindList())
	}
	var kind string
	if err := p.decodeField(label, f, &kind, "a string"); err != nil {
		return j, err
	}
	j.Kind = Kind(kind)
	allowed, known := kindFields[j.Kind]
	if !known {
		return j, p.errAt(f.voff, "job %s: unknown kind %q (want one of %s)", label, kind, kindList())
	}
	for _, f := range fields {
		switch f.key {
		case "name", "kind", "schedule", "holidays":
			continue
		}
		if !slices.Contains(allowed, f.key) {
			return j, p.errAt(f.off, "job %s: %q is not a field of a %s job", label, f.key, j.Kind)
		}
	}
	f, ok = byKey["schedule"]
	if !ok {
		return j, p.errAt(el.off, "job %s has no \"schedule\" (six cron fields, seconds first, in %s)", label, Market)
	}
	var spec string
	if err := p.decodeField(label, f, &spec, "a string"); err != nil {
		return j, err
	}
	if j.Schedule, err = ParseSchedule(spec); err != nil {
		return j, p.errAt(f.voff, "job %s: %v", label, err)
	}
	if hf, ok := byKey["holidays"]; ok {
		var h string
		if err := p.decodeField(label, hf, &h, `"skip" or "run"`); err != nil {
			return j, err
		}
		switch {
		case h != "skip" && h != "run":
			return j, p.errAt(hf.voff, "job %s: holidays %q: want \"skip\" (the default) or \"run\"", label, h)
		case h == "run" && j.Schedule.anchor != "":
			return j, p.errAt(hf.voff, "job %s: holidays \"run\" does not go with %s: a holiday has no session", label, j.Schedule.Spec)
		}
		j.Schedule.RunOnHolidays = h == "run"
	}
	probe := time.Date(2026, 1, 1, 0, 0, 0, 0, Market)
	if j.Schedule.Next(probe).IsZero() {
		return j, p.errAt(f.voff, "job %s: schedule %q never fires on a day the market is open", label, spec)
	}

	switch j.Kind {
	case KindLocate:
		err = p.locateFields(&j, label, el, byKey)
	case KindLedgerSync, KindReconcile:
		err = p.windowFields(&j, label, byKey)
	case KindAudit:
		err = p.auditFields(&j, label, el, byKey)
	}
	return j, err
}

func kindList() string {
	var s []string
	for _, k := range Kinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// policyJSON is the policy object of a locate job. Money is decimal: a
// JSON number or a string, never a float.
type policyJSON struct {
	MaxPrice       *decimal.Decimal `json:"maxPrice"`
	MaxCost        *decimal.Decimal `json:"maxCost"`
	AllowSingleUse bool             `json:"allowSingleUse"`
}

func (p *parser) locateFields(j *Job, label string, el element, byKey map[string]field) error {
	f, ok := byKey["symbols"]
	if !ok {
		return p.errAt(el.off, "job %s has no \"symbols\"", label)
	}
	if err := p.decodeField(label, f, &j.Symbols, "a list of symbols"); err != nil {
		return err
	}
	if len(j.Symbols) == 0 {
		return p.errAt(f.voff, "job %s: \"symbols\" is empty", label)
	}
	seen := map[string]bool{}
	for i, typed := range j.Symbols {
		s, err := brokercode.Symbol(typed)
		j.Symbols[i] = s
		if err != nil {
			var ie *brokercode.InputError
			msg := err.Error()
			if errors.As(err, &ie) {
				msg = ie.Message
			}
			return p.errAt(f.voff, "job %s: symbol %s", label, msg)
		}
		if seen[s] {
			return p.errAt(f.voff, "job %s: symbol %s is listed twice", label, s)
		}
		seen[s] = true
	}

	f, ok = byKey["quantity"]
	if !ok {
		return p.errAt(el.off, "job %s has no \"quantity\" (shares to have located per symbol)", label)
	}
	if err := p.decodeField(label, f, &j.Quantity, "a whole number of shares"); err != nil {
		return err
	}
	if err := brokercode.ValidateLocateQuantity(j.Quantity); err != nil {
		var ie *brokercode.InputError
		msg := err.Error()
		if errors.As(err, &ie) {
			msg = ie.Message
		}
		return p.errAt(f.voff, "job %s: quantity %s", label, msg)
	}

	f, ok = byKey["policy"]
	if !ok {
		return p.errAt(el.off, "job %s has no \"policy\": a locate job accepts without asking, so it needs maxPrice or maxCost", label)
	}
	pf, err := p.object(f.value, f.voff, fmt.Sprintf("the policy of job %s", label))
	if err != nil {
		return err
	}
	for _, k := range pf {
		if !slices.Contains([]string{"maxPrice", "maxCost", "allowSingleUse"}, k.key) {
			return p.errAt(k.off, "job %s: unknown policy field %q (want maxPrice, maxCost, allowSingleUse)", label, k.key)
		}
	}
	var pol policyJSON
	for _, k := range pf {
		var err error
		switch k.key {
		case "maxPrice":
			err = p.decodeMoney(label, k, &pol.MaxPrice)
		case "maxCost":
			err = p.decodeMoney(label, k, &pol.MaxCost)
		case "allowSingleUse":
			err = p.decodeField(label, k, &pol.AllowSingleUse, "true or false")
		}
		if err != nil {
			return err
		}
	}
	if pol.MaxPrice == nil && pol.MaxCost == nil {
		return p.errAt(f.voff, "job %s: the policy needs maxPrice or maxCost: a locate job accepts without asking", label)
	}
	j.Policy = workflow.Policy{AutoAccept: true, AllowSingleUse: pol.AllowSingleUse}
	if pol.MaxPrice != nil {
		j.Policy.MaxPrice = *pol.MaxPrice
	}
	if pol.MaxCost != nil {
		j.Policy.MaxCost = *pol.MaxCost
	}
	return nil
}

// decodeMoney reads a positive decimal given as a JSON number or string.
func (p *parser) decodeMoney(label string, f field, dst **decimal.Decimal) error {
	var d decimal.Decimal
	if err := json.Unmarshal(f.value, &d); err != nil || !d.IsPositive() {
		return p.errAt(f.voff, "job %s: policy %s must be a positive amount, not %s", label, f.key, strings.TrimSpace(string(f.value)))
	}
	*dst = &d
	return nil
}

func (p *parser) windowFields(j *Job, label string, byKey map[string]field) error {
	j.Days = DefaultDays
	if f, ok := byKey["days"]; ok {
		if err := p.decodeField(label, f, &j.Days, "a whole number of days"); err != nil {
			return err
		}
		if j.Days < 1 || j.Days > maxDays {
			return p.errAt(f.voff, "job %s: days %d: want 1 to %d", label, j.Days, maxDays)
		}
	}
	if j.Kind != KindReconcile {
		return nil
	}
	j.Grace = DefaultGrace
	if f, ok := byKey["grace"]; ok {
		var s string
		if err := p.decodeField(label, f, &s, `a duration such as "24h"`); err != nil {
			return err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return p.errAt(f.voff, "job %s: grace %q: want a duration such as \"24h\" or \"90m\"", label, s)
		}
		j.Grace = d
	}
	return nil
}

// auditFields reads an audit job's folder and its days (trading days,
// default 1).
func (p *parser) auditFields(j *Job, label string, el element, byKey map[string]field) error {
	f, ok := byKey["dir"]
	if !ok {
		return p.errAt(el.off, "job %s: dir is required: the folder the audit trail is written to", label)
	}
	if err := p.decodeField(label, f, &j.Dir, "a folder path"); err != nil {
		return err
	}
	if strings.TrimSpace(j.Dir) == "" {
		return p.errAt(f.voff, "job %s: dir is empty", label)
	}
	j.Days = 1
	if f, ok := byKey["days"]; ok {
		if err := p.decodeField(label, f, &j.Days, "a whole number of days"); err != nil {
			return err
		}
		if j.Days < 1 || j.Days > maxDays {
			return p.errAt(f.voff, "job %s: days %d: want 1 to %d", label, j.Days, maxDays)
		}
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// skipSpace returns the offset of the first non-space byte at or after off.
func skipSpace(b []byte, off int) int {
	for off < len(b) && isSpace(b[off]) {
		off++
	}
	return off
}

// skipSep skips spaces and the separators a decoder leaves before the next
// token (',' between values, ':' after a key).
func skipSep(b []byte, off int) int {
	for off < len(b) && (isSpace(b[off]) || b[off] == ',' || b[off] == ':') {
		off++
	}
	return off
}
