package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/safetext"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/market"
)

// Main is the program, separated from os so tests can drive it.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Forget, when set, removes a secret's variable from the process's
	// environment once it is read (Getenv must then answer from a
	// snapshot, as proc.Env does).
	Forget func(name string)
	// NoDump, when set, makes the process non-dumpable; the long-running
	// commands (serve, run, watch, mcp) call it first, and any command when
	// it becomes an account's owner (service.Config.NoDump).
	NoDump func() error
	// Clock is the broker's world's time for this run: the engine's
	// pacing and offer windows, the trading day, the simulator's. Nil is
	// the wall clock, or the clock the test setting names
	// (clock.SettingEnv), resolved by Run. Ownership stays on the wall
	// clock whatever it is.
	Clock clock.Clock

	verbosity    int    // -v count: 0 quiet, 1 info, 2 debug
	settingsFlag string // --config-file

	displayOnce sync.Once
	disp        *console.Display

	settingsOnce sync.Once
	settings     *config.File
	settingsErr  error

	lines func() <-chan string // Stdin's lines, for the prompts (console.Lines)
	// opened is the account this command opened (see connFlags.open),
	// through which a prompt answers a side of a pair it was not asked.
	opened atomic.Pointer[service.Handle]
}

// NewMain returns a Main writing to the given streams and reading the given
// environment.
func NewMain(stdout, stderr io.Writer, getenv func(string) string) *Main {
	// Loggers of the client, the engine and the jobs write to stderr from
	// their own goroutines through their own handlers: one lock for all.
	return &Main{Stdin: os.Stdin, Stdout: stdout, Stderr: &console.SyncWriter{W: stderr}, Getenv: getenv}
}

// secretEnv reads a secret's variable (a key, a token, a webhook URL) and
// has it forgotten by the process's environment.
func (m *Main) secretEnv(name string) string {
	v := m.Getenv(name)
	if m.Forget != nil {
		m.Forget(name)
	}
	return v
}

// warnClosed tells a person about to locate or short that the exchange has
// no session left today, when it is a holiday or after an early close
// (market.ClosedNote); the request still goes.
func (m *Main) warnClosed() {
	if note := market.ClosedNote(m.Clock.Now()); note != "" {
		fmt.Fprintf(m.Stderr, "warning: %s\n", note)
	}
}

// noDump makes the process non-dumpable, when the program says how.
func (m *Main) noDump() error {
	if m.NoDump == nil {
		return nil
	}
	return m.NoDump()
}

// command is one subcommand: its flags are declared on fs, then run gets
// the positional arguments. cli.go builds the command tree from these and
// the table in commands, so a command file holds only its own work.
type command interface {
	flags(fs *pflag.FlagSet)
	run(ctx context.Context, args []string) error
}

// spec is how a subcommand is presented: its positional arguments (one
// line, for the usage line), the group it is listed under, the formats it
// prints (-o, console.Limit), what it does (one line), and examples a
// person can paste.
type spec struct {
	name, args, group string
	formats           []console.Format
	short             string
	new               func() command
}

// lines are the formats of a command that prints events or a live view
// rather than records: no CSV.
var lines = []console.Format{console.Table, console.JSON}

// examples are the examples of each command's help, by name.
//
//go:embed examples.txt
var examplesText string

// Help groups, in the order the top-level help lists them.
const (
	groupLocate = "locate"
	groupRead   = "read"
	groupRun    = "run"
	groupTools  = "tools"
)

// commands lists the subcommands (name, arguments, group, formats,
// summary); help lists each group's by name.
func (m *Main) commands() []spec {
	conn := connFlags{m: m}
	return slices.Concat(tradingCommands(conn), readCommands(conn), m.processCommands(conn))
}

// tradingCommands locate, short, cover, credit back and answer offers.
func tradingCommands(conn connFlags) []spec {
	return []spec{
		{"locate", "SYMBOL QTY [SYMBOL QTY ...]", groupLocate, console.Formats,
			"ensure QTY located shares of each SYMBOL or --watchlist row, quoting only the shortfall and accepting within policy", func() command { return &locateCommand{conn: conn} }},
		{"quote", "SYMBOL [SYMBOL ...]", groupLocate, console.Formats,
			"show the broker's locate offer (price, total, type, Reg SHO side) for each SYMBOL, then cancel it: nothing is accepted", func() command { return &quoteCommand{conn: conn} }},
		{"shortable", "SYMBOL [SYMBOL ...]", groupRead, console.Formats,
			"show for each SYMBOL (or --watchlist row) whether it is easy to borrow, its located inventory and the last offers seen", func() command { return &shortableCommand{conn: conn} }},
		{"short", "SYMBOL QTY", groupLocate, console.Formats,
			"ensure the locate, then sell short QTY (a limit at --limit-price by default; --type, --tif; asks unless --yes)", func() command { return &shortCommand{conn: conn} }},
		{"cover", "SYMBOL SHARES", groupLocate, console.Formats,
			"buy to cover SHARES of a short (Buy/Close; a limit at --limit-price by default; --type, --tif; asks unless --yes)", func() command { return &coverCommand{conn: conn} }},
		{"credit-back", "SYMBOL [QTY] | --all", groupLocate, console.Formats,
			"credit back QTY located shares of one inventory row, or every unused share of SYMBOL or of --all symbols", func() command { return &creditBackCommand{conn: conn} }},
		{"offers", "", groupLocate, console.Formats,
			"list the offers waiting on a person: each side's price, and the seconds left to approve or decline", func() command { return &offersCommand{conn: conn} }},
		{"approve", "ID", groupLocate, console.Formats,
			"accept the offer waiting on workflow ID (within its policy)", func() command { return &answerCommand{conn: conn, name: "approve"} }},
		{"decline", "ID", groupLocate, console.Formats,
			"decline the offer waiting on workflow ID (it is cancelled at the broker)", func() command { return &answerCommand{conn: conn, name: "decline"} }},
		{"cancel", "ID", groupLocate, console.Formats,
			"cancel an unfinished locate or credit-back and wait for the broker to confirm", func() command { return &answerCommand{conn: conn, name: "cancel"} }},
		{"mcp", "", groupLocate, nil,
			"serve the account to an agent over the Model Context Protocol on stdin and stdout: the tools of a trading day (account, quote, locate, short, cover, orders, cancel, offers, spend, ...; --read-only or --tools to choose)", func() command { return &mcpCommand{conn: conn} }},
		{"resume", "", groupLocate, lines,
			"drive every unfinished workflow to a final state (after a crash or an interrupt), then exit", func() command { return &resumeCommand{conn: conn} }},
	}
}

// readCommands read the account, its workflows and its records.
func readCommands(conn connFlags) []spec {
	return []spec{
		{"status", "[ID]", groupRead, console.Formats,
			"list recent workflows, or one workflow or order with its transitions (local, sends nothing)", func() command { return &statusCommand{conn: conn} }},
		{"jobs", "", groupRead, console.Formats,
			"list the recorded runs of scheduled jobs, newest first (local, sends nothing)", func() command { return &jobsCommand{conn: conn} }},
		{"inventory", "", groupRead, console.Formats,
			"print the account's located inventory", reader(conn, "inventory", account.ReadInventory, func(o console.Printer, r *account.ReadResult) { console.Inventory(o, r.Inventory) })},
		{"history", "", groupRead, console.Formats,
			"print today's locate history at the broker", reader(conn, "history", account.ReadLocateHistory, func(o console.Printer, r *account.ReadResult) { console.LocateHistory(o, r.History) })},
		{"fees", "", groupRead, console.Formats,
			"sync the cash ledger and reconcile locate fees and credits; exit 3 when one is missing, wrong or unexplained", func() command { return &feesCommand{conn: conn} }},
		{"report", "", groupRead, console.Formats,
			"spend analytics: located, shorted and credited shares, utilisation, spend, recovery, net spend, forgone offers, price per 100, P&L net of locates, fee status", func() command { return &reportCommand{conn: conn} }},
		{"audit", "", groupRead, console.Formats,
			"Reg SHO audit trail: every short sale with the locate or easy-to-borrow check that covered it; exit 3 when one was sent without cover", func() command { return &auditCommand{conn: conn} }},
		{"plan", "", groupRead, console.Formats,
			"for a watchlist, the quantity to locate before the open from the last days' shorted shares, and the price range of the offers seen", func() command { return &planCommand{conn: conn} }},
		{"size", "SYMBOL", groupRead, console.Formats,
			"shares of SYMBOL shortable at --price now, the limit that binds, and the lots to locate for a target (reads only)", func() command { return &sizeCommand{conn: conn} }},
		{"accounts", "", groupRead, console.Formats,
			"list the accounts these keys reach: type, status, cash, buying power", func() command { return &accountsCommand{conn: conn} }},
		{"pnl", "", groupRead, console.Formats,
			"print today's profit and loss, per lot", func() command { return &pnlCommand{conn: conn} }},
		{"positions", "", groupRead, console.Formats,
			"print open positions [--closed | --historical DATE]", func() command { return &positionsCommand{conn: conn} }},
		{"orders", "[cancel CLIENT_ORDER_ID]", groupRead, console.Formats,
			"print today's orders, or the fills since --history DATE; 'orders cancel' cancels one locator placed", func() command { return &ordersCommand{conn: conn} }},
		{"routes", "", groupRead, console.Formats,
			"print the order routes available to the account", reader(conn, "routes", account.ReadRoutes, func(o console.Printer, r *account.ReadResult) { console.Routes(o, r.Routes) })},
		{"watch", "pnl|orders", groupRead, lines,
			"follow the P&L (watch pnl) or the orders (watch orders) live from the broker's streams, relayed by the account's owner when one runs", func() command { return &watchCommand{conn: conn} }},
	}
}

// processCommands run a process beside the account (the daemon, the
// simulator, the demo), or set it up.
func (m *Main) processCommands(conn connFlags) []spec {
	return []spec{
		{"run", "", groupRun, lines,
			"the daemon with schedules (serve --jobs FILE by its older name; --config FILE [--once JOB]): scheduled locates, credit-backs, ledger syncs, reconciliation", func() command { return &runCommand{serve: serveCommand{conn: conn}} }},
		{"serve", "", groupRun, lines,
			"own the account(s) and take every other process's requests until stopped (--config FILE lists several; --jobs FILE runs schedules)", func() command { return &serveCommand{conn: conn} }},
		{"owner-credential", "HOST", groupRun, nil,
			"print a follower host's own credential for the accounts this host serves (--until TIME), made from LOCATOR_OWNER_TOKEN", func() command { return &ownerCredentialCommand{m: m} }},
		{"login", "", groupRun, lines,
			"sign in through the partner OAuth program in a browser; stores the tokens encrypted", func() command { return &loginCommand{conn: conn} }},
		{"logout", "", groupRun, lines,
			"forget the stored partner tokens", func() command { return &logoutCommand{conn: conn} }},
		{"config", "", groupRun, console.Formats,
			"show the effective settings and where each comes from (flag, environment, settings file, default)", func() command { return &configCommand{conn: conn} }},
		{"version", "", groupRun, lines,
			"print locator's version", func() command { return &versionCommand{m: m} }},
		{"sim", "", groupTools, nil,
			"serve the broker simulator; prints one JSON line with its address and keys when ready", func() command { return &simCommand{m: m} }},
		{"demo", "", groupTools, nil,
			"run the locate engine against the embedded simulator: six workflows, narrated", func() command { return &demoCommand{m: m} }},
		{"bench", "", groupTools, nil,
			"benchmark batch locates (engine against the naive loop) on the simulator; writes bench.json and bench.svg", func() command { return &benchCommand{m: m} }},
		{"states", "", groupTools, nil,
			"print one workflow state machine (--kind) as Mermaid or Graphviz", func() command { return &statesCommand{m: m} }},
	}
}

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
	root := m.top()
	ex := console.Examples(examplesText)
	for _, sp := range m.commands() {
		root.AddCommand(m.subcommand(sp, ex[sp.name]))
	}
	// cobra's help and completion commands are made now rather than when
	// the tree runs, so that their booleans show the same way.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	plainBools(root)
	return root
}

// top is the tree's root: the program's help, its persistent flags and
// the groups of its commands.
func (m *Main) top() *cobra.Command {
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
	pf.StringVar(&m.settingsFlag, "config-file", "", "settings file (env LOCATOR_CONFIG; default "+config.Hint+")")
	pf.CountVarP(&m.verbosity, "verbose", "v", "log to stderr what the engine does (-v: its steps, -vv: also retries, reconnects, refused steps)")
	root.AddGroup(
		&cobra.Group{ID: groupLocate, Title: "Locates and orders:"},
		&cobra.Group{ID: groupRead, Title: "Reading the account:"},
		&cobra.Group{ID: groupRun, Title: "Running it:"},
		&cobra.Group{ID: groupTools, Title: "Simulator and tools:"},
	)
	return root
}

// subcommand is the command sp describes, with its examples.
func (m *Main) subcommand(sp spec, examples []string) *cobra.Command {
	c := sp.new()
	use := sp.name
	if sp.args != "" {
		use += " " + sp.args
	}
	sc := &cobra.Command{
		Use: use, Short: sp.short, GroupID: sp.group,
		Example: "  " + strings.Join(examples, "\n  "),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if len(args) > 0 && sp.args == "" { // this command takes none: refused before it runs
				err = console.Usagef("unexpected argument %q", args[0])
			} else {
				err = c.run(cmd.Context(), args)
			}
			if err != nil {
				return &commandError{path: cmd.CommandPath(), err: err}
			}
			return nil
		},
	}
	c.flags(sc.Flags())
	console.Limit(sc.Flags(), sp.formats...)
	sc.Flags().SetOutput(m.Stderr) // a deprecated flag's notice
	return sc
}

// plainBools shows the boolean flags of cmd and its subcommands plainly
// in help (console.PlainBools). The help flag is declared here for the
// same reason (cobra would add its own).
func plainBools(cmd *cobra.Command) {
	if cmd.Flags().Lookup("help") == nil {
		cmd.Flags().BoolP("help", "h", false, "help for "+cmd.Name())
	}
	console.PlainBools(cmd.Flags())
	for _, sub := range cmd.Commands() {
		plainBools(sub)
	}
}

// Run parses args, runs the subcommand and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	if m.Clock == nil {
		clk, err := clockSetting(m.Getenv(clock.SettingEnv))
		if err != nil {
			fmt.Fprintf(m.Stderr, "locator: %s: %v\n", clock.SettingEnv, err)
			return console.ExitUsage
		}
		m.Clock = clk
	}
	root := m.root()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if m.disp != nil {
		m.disp.Close()
	}
	var ce *commandError
	switch {
	case err == nil:
		return console.ExitOK
	case errors.As(err, &ce):
		return m.exitCode(ctx, ce)
	}
	// The command line itself is wrong: nothing ran.
	if n := console.NegativeNumber(err); n != "" {
		fmt.Fprintf(m.Stderr, "%s: %s: a quantity, a price or a cap is a positive number; nothing was sent\n", cmd.CommandPath(), n)
	} else {
		fmt.Fprintf(m.Stderr, "%s: %s\n", cmd.CommandPath(), safetext.Terminal(err.Error()))
		if s := console.SuggestFlag(cmd.Flags(), err); s != "" {
			fmt.Fprintf(m.Stderr, "Did you mean --%s?\n", s)
		}
	}
	fmt.Fprintf(m.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return console.ExitUsage
}

// clockSetting is the clock a test setting names (clock.SettingEnv), or the
// wall clock when it is empty.
func clockSetting(setting string) (clock.Clock, error) {
	if setting == "" {
		return clock.Real{}, nil
	}
	return clock.ParseSetting(setting)
}

// exitCode prints the error a command ended with and maps it to the
// exit-code contract (docs/design.md, console.Ending).
func (m *Main) exitCode(ctx context.Context, ce *commandError) int {
	code, msg := console.Ending(ctx, ce.err)
	// The message may quote an id or a name from the command line, the
	// database or the broker: nothing in it acts on the terminal.
	fmt.Fprintf(m.Stderr, "%s: %s\n", ce.path, safetext.Terminal(msg))
	return code
}
