package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/workflow"
)

// Exit codes, the contract in docs/design.md.
const (
	exitOK        = 0
	exitFailure   = 1 // unexpected failure
	exitUsage     = 2 // bad usage or input; nothing was sent
	exitBroker    = 3 // the broker rejected, expired or cancelled it
	exitDeclined  = 4 // declined by the cost policy
	exitInterrupt = 130
)

// Main is the program, separated from os so tests can drive it.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	verbosity    int    // -v count: 0 quiet, 1 info, 2 debug
	settingsFlag string // --config-file

	displayOnce sync.Once
	disp        *display

	settingsOnce sync.Once
	settings     *settingsFile
	settingsErr  error

	linesOnce sync.Once
	lines     chan string // Stdin's lines, for the prompts
}

// NewMain returns a Main writing to the given streams and reading the given
// environment.
func NewMain(stdout, stderr io.Writer, getenv func(string) string) *Main {
	// Loggers of the client, the engine and the jobs write to stderr from
	// their own goroutines through their own handlers: one lock for all.
	return &Main{Stdin: os.Stdin, Stdout: stdout, Stderr: &lockedWriter{w: stderr}, Getenv: getenv}
}

// lockedWriter serialises writes from several slog handlers sharing one
// writer (os.Stderr is safe; a test's buffer is not).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// command is one subcommand: its flags are declared on fs, then run gets
// the positional arguments. cli.go builds the command tree from these and
// the table in commands, so a command file holds only its own work.
type command interface {
	synopsis() string
	flags(fs *pflag.FlagSet)
	run(ctx context.Context, args []string) error
}

// spec is how a subcommand is presented: its positional arguments (one
// line, for the usage line), the group it is listed under, and examples a
// person can paste.
type spec struct {
	name, args, group string
	examples          []string
	new               func() command
}

// Help groups, in the order the top-level help lists them.
const (
	groupLocate = "locate"
	groupRead   = "read"
	groupRun    = "run"
	groupTools  = "tools"
)

// commands lists the subcommands: name, arguments, group, examples.
func (m *Main) commands() []spec {
	conn := connFlags{m: m}
	return []spec{
		{"locate", "SYMBOL QTY [SYMBOL QTY ...]", groupLocate, []string{
			"locator locate HTBX 300 --max-price 0.02",
			"locator locate HTBX 300 RSHO 200 --max-cost 20 --allow-single-use --json",
			"locator locate --watchlist watchlist.csv --max-price 0.05",
		}, func() command { return &locateCommand{conn: conn} }},
		{"quote", "SYMBOL [SYMBOL ...]", groupLocate, []string{
			"locator quote HTBX RSHO",
			"locator quote HTBX HTBY RSHO RSSU NOINV --quantity 500 -o json",
		}, func() command { return &quoteCommand{conn: conn} }},
		{"shortable", "SYMBOL [SYMBOL ...]", groupRead, []string{
			"locator shortable HTBX RSHO AAPL",
			"locator shortable --watchlist watchlist.csv -o csv",
		}, func() command { return &shortableCommand{conn: conn} }},
		{"short", "SYMBOL QTY", groupLocate, []string{
			"locator short HTBX 100 --limit-price 12.00 --max-price 0.02",
			"locator short HTBX 100 --limit-price 12.00 --max-price 0.02 --route SMART --yes -o json",
		}, func() command { return &shortCommand{conn: conn} }},
		{"credit-back", "SYMBOL QTY", groupLocate, []string{
			"locator credit-back HTBX 100",
			"locator credit-back RSHO 100 --type PreBorrow --json",
		}, func() command { return &creditBackCommand{conn: conn} }},
		{"approve", "ID", groupLocate, []string{
			"locator approve wf-3f6c2a9e-1b2c",
		}, func() command { return &answerCommand{conn: conn, accept: true} }},
		{"decline", "ID", groupLocate, []string{
			"locator decline wf-3f6c2a9e-1b2c",
		}, func() command { return &answerCommand{conn: conn} }},
		{"cancel", "ID", groupLocate, []string{
			"locator cancel wf-3f6c2a9e-1b2c",
		}, func() command { return &cancelCommand{conn: conn} }},
		{"resume", "", groupLocate, []string{
			"locator resume",
		}, func() command { return &resumeCommand{conn: conn} }},
		{"status", "[ID]", groupRead, []string{
			"locator status",
			"locator status --limit 5 -o csv",
			"locator status wf-3f6c2a9e-1b2c --json",
		}, func() command { return &statusCommand{conn: conn} }},
		{"jobs", "", groupRead, []string{
			"locator jobs",
			"locator jobs --job premarket --limit 5 -o json",
		}, func() command { return &jobsCommand{conn: conn} }},
		{"inventory", "", groupRead, []string{
			"locator inventory",
			"locator inventory -o csv > inventory.csv",
		}, func() command { return &inventoryCommand{conn: conn} }},
		{"history", "", groupRead, []string{
			"locator history",
			"locator history --json",
		}, func() command { return &historyCommand{conn: conn} }},
		{"fees", "", groupRead, []string{
			"locator fees",
			"locator fees --since 2026-11-01 -o csv > fees.csv",
		}, func() command { return &feesCommand{conn: conn} }},
		{"size", "SYMBOL", groupRead, []string{
			"locator size HTBX --price 12.50",
			"locator size HTBX --price 12.50 --target 1000 --json",
		}, func() command { return &sizeCommand{conn: conn} }},
		{"accounts", "", groupRead, []string{
			"locator accounts",
		}, func() command { return &accountsCommand{conn: conn} }},
		{"pnl", "", groupRead, []string{
			"locator pnl",
			"locator pnl --json",
		}, func() command { return &pnlCommand{conn: conn} }},
		{"positions", "", groupRead, []string{
			"locator positions",
			"locator positions --closed -o csv",
			"locator positions --historical 2026-11-20",
		}, func() command { return &positionsCommand{conn: conn} }},
		{"orders", "[cancel CLIENT_ORDER_ID]", groupRead, []string{
			"locator orders",
			"locator orders --history 2026-11-01 -o csv",
			"locator orders cancel 6f1d2c3b-8a4e-4f5a-9b7c-0d1e2f3a4b5c",
		}, func() command { return &ordersCommand{conn: conn} }},
		{"routes", "", groupRead, []string{
			"locator routes",
		}, func() command { return &routesCommand{conn: conn} }},
		{"watch", "pnl|orders", groupRead, []string{
			"locator watch pnl",
			"locator watch orders --json",
		}, func() command { return &watchCommand{conn: conn} }},
		{"run", "", groupRun, []string{
			"locator run --config jobs.json",
			"locator run --config jobs.json --once premarket",
		}, func() command { return &runCommand{conn: conn} }},
		{"serve", "", groupRun, []string{
			"locator serve",
			"locator serve --config accounts.json",
		}, func() command { return &serveCommand{conn: conn} }},
		{"login", "", groupRun, []string{
			"locator login --partner --client-id demo-client --env paper",
		}, func() command { return &loginCommand{conn: conn} }},
		{"logout", "", groupRun, []string{
			"locator logout",
		}, func() command { return &logoutCommand{conn: conn} }},
		{"config", "", groupRun, []string{
			"locator config",
			"locator config --account paper --json",
		}, func() command { return &configCommand{conn: conn} }},
		{"version", "", groupRun, []string{
			"locator version",
			"locator version --json",
		}, func() command { return &versionCommand{m: m} }},
		{"sim", "", groupTools, []string{
			"locator sim --addr 127.0.0.1:8700",
			"locator sim --print-scenario > scenario.json",
		}, func() command { return &simCommand{m: m} }},
		{"demo", "", groupTools, []string{
			"locator demo",
			"locator demo --speed 20 --db demo.db",
		}, func() command { return &demoCommand{m: m} }},
		{"bench", "", groupTools, []string{
			"locator bench --n 20 --out ''",
		}, func() command { return &benchCommand{m: m} }},
		{"states", "", groupTools, []string{
			"locator states",
			"locator states --kind locate --format dot | dot -Tsvg > locate.svg",
		}, func() command { return &statesCommand{m: m} }},
	}
}

// usageError is bad usage or input: exit 2, nothing was sent.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// commandError is what a command's run returned, kept apart from the
// errors of parsing the command line, which are all usage errors.
type commandError struct {
	path string // "locator locate"
	err  error
}

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }

// root builds the command tree for one run.
func (m *Main) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "locator",
		Short: "Short-sale locates on the broker, end to end",
		Long: `locator checks easy-to-borrow, quotes, accepts within your cost policy, confirms
the inventory, credits back what is unused and reconciles the fees: every
workflow persisted, so a crash or restart loses nothing and repeats nothing.

Connection: LOCATOR_BASE_URL, LOCATOR_KEY_ID, LOCATOR_SECRET, LOCATOR_ACCOUNT,
LOCATOR_DB (flags --base-url, --account, --db override), over the settings
file (see 'locator config'). Try it on the simulator: 'locator sim'.

Exit codes: 0 done, 1 unexpected failure, 2 bad usage or input (nothing was
sent), 3 rejected, expired or cancelled by the broker, 4 declined by the cost
policy, 130 interrupted.`,
		Example:       "  locator sim --addr 127.0.0.1:8700\n  locator locate HTBX 300 --max-price 0.02\n  locator help locate",
		SilenceErrors: true,
		SilenceUsage:  true,
		// Names within two edits are suggested (cobra's own default, which
		// it sets only on its own path, not for SuggestionsFor).
		SuggestionsMinimumDistance: 2,
		// A mistyped command gets cobra's suggestions of the nearest names.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			return errors.New(msg)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.Help()
			return errors.New("no command given")
		},
	}
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	pf := root.PersistentFlags()
	// Not --config: run and serve already take that for their own files.
	pf.StringVar(&m.settingsFlag, "config-file", "", "settings file (env LOCATOR_CONFIG; default "+settingsHint+")")
	pf.CountVarP(&m.verbosity, "verbose", "v", "log to stderr what the engine does (-v: its steps, -vv: also retries, reconnects, refused steps)")
	root.AddGroup(
		&cobra.Group{ID: groupLocate, Title: "Locates and orders:"},
		&cobra.Group{ID: groupRead, Title: "Reading the account:"},
		&cobra.Group{ID: groupRun, Title: "Running it:"},
		&cobra.Group{ID: groupTools, Title: "Simulator and tools:"},
	)
	for _, sp := range m.commands() {
		c := sp.new()
		use := sp.name
		if sp.args != "" {
			use += " " + sp.args
		}
		sc := &cobra.Command{
			Use: use, Short: c.synopsis(), GroupID: sp.group,
			Example: "  " + strings.Join(sp.examples, "\n  "),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := c.run(cmd.Context(), args); err != nil {
					return &commandError{path: cmd.CommandPath(), err: err}
				}
				return nil
			},
		}
		c.flags(sc.Flags())
		sc.Flags().SetOutput(m.Stderr) // a deprecated flag's notice
		root.AddCommand(sc)
	}
	// cobra's help and completion commands are made now rather than when
	// the tree runs, so that their booleans show the same way.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	plainBools(root)
	return root
}

// plainBools makes the boolean flags of cmd and its subcommands show in
// help as --json rather than pflag's --json[=true|false]: pflag adds the
// suffix to a value that says it is a bool flag, and parses any flag with a
// NoOptDefVal the same way, so the value is wrapped to stop saying so. The
// help flag is declared here for the same reason (cobra would add its own).
func plainBools(cmd *cobra.Command) {
	if cmd.Flags().Lookup("help") == nil {
		cmd.Flags().BoolP("help", "h", false, "help for "+cmd.Name())
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = plainBool{f.Value}
		}
	})
	for _, sub := range cmd.Commands() {
		plainBools(sub)
	}
}

// plainBool is a bool flag's value without IsBoolFlag (see plainBools).
type plainBool struct{ v pflag.Value }

func (b plainBool) String() string     { return b.v.String() }
func (b plainBool) Set(s string) error { return b.v.Set(s) }
func (b plainBool) Type() string       { return b.v.Type() }

// Run parses args, runs the subcommand and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	root := m.root()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if m.disp != nil {
		m.disp.close()
	}
	var ce *commandError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ce):
		return m.exitCode(ctx, ce)
	}
	// The command line itself is wrong: nothing ran.
	fmt.Fprintf(m.Stderr, "%s: %v\n", cmd.CommandPath(), err)
	if s := flagSuggestion(cmd, err); s != "" {
		fmt.Fprintf(m.Stderr, "Did you mean --%s?\n", s)
	}
	fmt.Fprintf(m.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return exitUsage
}

// flagSuggestion is cmd's flag nearest a mistyped one (at most two edits
// away), as cobra suggests commands, or "".
func flagSuggestion(cmd *cobra.Command, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedName() == "" {
		return ""
	}
	typed := ne.GetSpecifiedName()
	best, bestDist := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if d := editDistance(typed, f.Name); !f.Hidden && d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// exitCode prints the error a command ended with and maps it to the
// exit-code contract (docs/design.md).
func (m *Main) exitCode(ctx context.Context, ce *commandError) int {
	err := ce.err
	var ue *usageError
	var ee *exitError
	code, msg := exitFailure, err.Error()
	var ae *account.Error
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &ue):
		code = exitUsage
	case errors.As(err, &ae) && !errors.Is(err, workflow.ErrInput):
		code = account.ExitOf(ae)
	case errors.Is(err, workflow.ErrInput):
		code = exitUsage
		if !strings.Contains(msg, "nothing was sent") {
			msg += "; nothing was sent"
		}
	case errors.Is(err, brokerclient.ErrLoginRequired):
		msg += "\nrun 'locator login --partner' to sign in again"
	case errors.Is(err, context.Canceled):
		code, msg = exitInterrupt, "interrupted"
	}
	// Interrupted (Ctrl-C, SIGTERM), a command that did not finish exits
	// 130 whatever error its cut-off work returned.
	if ctx.Err() != nil && code != exitInterrupt {
		code = exitInterrupt
	}
	fmt.Fprintf(m.Stderr, "%s: %s\n", ce.path, msg)
	return code
}
