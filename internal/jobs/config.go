package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/workflow"
)

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
	if err := p.schedule(&j, label, el, byKey); err != nil {
		return j, err
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

// schedule reads a job's schedule and its holidays rule, refusing a
// schedule that never fires on a trading day.
func (p *parser) schedule(j *Job, label string, el element, byKey map[string]field) error {
	f, ok := byKey["schedule"]
	if !ok {
		return p.errAt(el.off, "job %s has no \"schedule\" (six cron fields, seconds first, in %s)", label, Market)
	}
	var spec string
	if err := p.decodeField(label, f, &spec, "a string"); err != nil {
		return err
	}
	var err error
	if j.Schedule, err = ParseSchedule(spec); err != nil {
		return p.errAt(f.voff, "job %s: %v", label, err)
	}
	if hf, ok := byKey["holidays"]; ok {
		var h string
		if err := p.decodeField(label, hf, &h, `"skip" or "run"`); err != nil {
			return err
		}
		switch {
		case h != "skip" && h != "run":
			return p.errAt(hf.voff, "job %s: holidays %q: want \"skip\" (the default) or \"run\"", label, h)
		case h == "run" && j.Schedule.anchor != "":
			return p.errAt(hf.voff, "job %s: holidays \"run\" does not go with %s: a holiday has no session", label, j.Schedule.Spec)
		}
		j.Schedule.RunOnHolidays = h == "run"
	}
	probe := time.Date(2026, 1, 1, 0, 0, 0, 0, Market)
	if j.Schedule.Next(probe).IsZero() {
		return p.errAt(f.voff, "job %s: schedule %q never fires on a day the market is open", label, spec)
	}
	return nil
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

// locateFields reads a locate job's symbols, quantity and policy.
func (p *parser) locateFields(j *Job, label string, el element, byKey map[string]field) error {
	if err := p.symbols(j, label, el, byKey); err != nil {
		return err
	}
	f, ok := byKey["quantity"]
	if !ok {
		return p.errAt(el.off, "job %s has no \"quantity\" (shares to have located per symbol)", label)
	}
	if err := p.decodeField(label, f, &j.Quantity, "a whole number of shares"); err != nil {
		return err
	}
	if err := brokercode.ValidateLocateQuantity(j.Quantity); err != nil {
		return p.errAt(f.voff, "job %s: quantity %s", label, inputMessage(err))
	}
	return p.policy(j, label, el, byKey)
}

// symbols reads a locate job's symbols: typed in any case, upper-cased,
// each once.
func (p *parser) symbols(j *Job, label string, el element, byKey map[string]field) error {
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
			return p.errAt(f.voff, "job %s: symbol %s", label, inputMessage(err))
		}
		if seen[s] {
			return p.errAt(f.voff, "job %s: symbol %s is listed twice", label, s)
		}
		seen[s] = true
	}
	return nil
}

// inputMessage is the message of an input error without its field prefix.
func inputMessage(err error) string {
	var ie *brokercode.InputError
	if errors.As(err, &ie) {
		return ie.Message
	}
	return err.Error()
}

// policy reads a locate job's policy: it accepts without asking, so it
// needs maxPrice or maxCost.
func (p *parser) policy(j *Job, label string, el element, byKey map[string]field) error {
	f, ok := byKey["policy"]
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
	if err := p.days(j, label, DefaultDays, byKey); err != nil {
		return err
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
	return p.days(j, label, 1, byKey)
}

// days reads a job's "days" (1 to maxDays), def when absent.
func (p *parser) days(j *Job, label string, def int, byKey map[string]field) error {
	j.Days = def
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
