// Command hamcp is a Model Context Protocol server for Home Assistant.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
	// The panel reads dates in the browser's zone by IANA name; the zone database travels in the
	// binary so that works whatever the image carries (about 450 KB).
	_ "time/tzdata"

	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/internal/idlegc"
	"github.com/hamcp/hamcp/src/internal/nodump"
	"github.com/hamcp/hamcp/src/toolkit"
)

const usage = `hamcp — a Model Context Protocol server for Home Assistant

Usage:
  hamcp serve   [options]   serve MCP over HTTP (the add-on, or standalone with HA_URL + HA_TOKEN)
  hamcp stdio   [options]   serve one MCP session over stdin/stdout (add --demo for the simulated home)
  hamcp demo    [options]   run everything against the built-in simulated home
  hamcp version             print the version

Run 'hamcp <command> --help' for the options of a command. Every option can also be set with a
HAMCP_* environment variable or, in the add-on, in /data/options.json (flags win, then environment).
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve", "stdio", "demo":
		// Before any command can run: keep hamcp's environment (the Supervisor token, HA_TOKEN)
		// and memory out of reach of the shell commands the user allows (see src/internal/nodump).
		if perr := nodump.Protect(); perr != nil {
			fmt.Fprintln(os.Stderr, "hamcp: warning:", perr)
		}
		tuneGC(os.Getenv)
		go idlegc.Run(ctx, idleCheckEvery, idleBelowBytes)
	}
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = serve(ctx, args)
	case "stdio":
		err = stdio(ctx, args)
	case "demo":
		err = runDemo(ctx, args)
	case "version", "--version", "-v":
		fmt.Println("hamcp", app.Version)
	case "help", "--help", "-h":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "hamcp: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "hamcp:", err)
		os.Exit(1)
	}
}

// command is one subcommand's flag set: the configuration options that apply to it, its own
// flags, and its own defaults where they differ from the add-on's.
type command struct {
	name, summary string
	defaults      map[string]string // option name → this subcommand's default
	noOptionsFile bool              // ignore /data/options.json (the demo)
	fs            *flag.FlagSet
}

func newCommand(name, summary string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Errors and help are printed by parse, once, in hamcp's words.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{name: name, summary: summary, fs: fs}
}

// load parses args and builds the configuration: flags, then HAMCP_* environment, then the
// add-on's options, then this subcommand's defaults. --help prints the help to stdout.
func (c *command) load(args []string) (*config.Config, error) {
	config.BindCommandFlags(c.fs, c.name)
	err := c.fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(os.Stdout)
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%s; run 'hamcp %s --help' for the options", flagError(err), c.name)
	case c.fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q; run 'hamcp %s --help' for the options", c.fs.Arg(0), c.name)
	}
	return config.Load(config.Sources{Flags: c.fs, NoOptionsFile: c.noOptionsFile, Defaults: c.defaults})
}

// flagError rewords the flag package's parse errors with the --flag spelling the help uses.
func flagError(err error) string {
	msg := err.Error()
	for _, r := range []struct{ from, to string }{
		{"flag provided but not defined: -", "unknown flag --"},
		{"flag needs an argument: -", "a value is missing after --"},
	} {
		if rest, ok := strings.CutPrefix(msg, r.from); ok {
			return r.to + strings.TrimPrefix(rest, "-")
		}
	}
	return msg
}

// printHelp lists every flag of the subcommand with what it takes, its real default for this
// subcommand, the accepted values and the environment variables.
func (c *command) printHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nUsage: hamcp %s [options]\n\nOptions:\n", c.summary, c.name)
	c.fs.VisitAll(func(f *flag.Flag) {
		name, text := "--"+f.Name, f.Usage
		if o, ok := config.Lookup(f.Name); ok {
			if acc := o.Accepted(); acc != nil {
				name += " " + strings.Join(acc, "|")
			} else {
				name += map[string]string{"int": " N", "duration": " DURATION", "list": " A,B,…", "text": " VALUE"}[o.Kind]
			}
			var accepted []string
			if o.Name == "toolsets" {
				accepted = app.Toolsets()
			}
			text = o.Describe(c.defaults[o.Name], accepted...)
		} else if f.DefValue != "" && f.DefValue != "false" {
			name += " VALUE"
			text += " (default " + f.DefValue + ")"
		} else if f.DefValue == "" {
			name += " VALUE"
		}
		fmt.Fprintf(w, "  %s\n        %s\n", name, text)
	})
	fmt.Fprint(w, "\nDurations are like 30s, 5m or 8h (a plain number is seconds). Lists are comma-separated.\n")
	if c.noOptionsFile {
		fmt.Fprint(w, "A flag wins over its environment variable.\n")
	} else {
		fmt.Fprint(w, "A flag wins over its environment variable, which wins over the add-on's options (/data/options.json).\n")
	}
}

// The garbage collector's defaults, chosen from the measurements of `hamcp serve` alone in
// docs/performance.md ("hamcp serve alone: memory and start"): a target of 400 % lets the heap
// grow further between collections than Go's 100, which costs a few MB and saves about a fifth
// of the CPU a call takes under load. Unbounded, it would also multiply what many sessions
// keep live (1,000 sessions under load: 270 MB), so a soft limit makes the collector work harder
// instead; 80 MiB keeps that case under 100 MB while staying clear of the ≈ 60 MiB those sessions
// hold (at 64 MiB the collector ran almost back to back).
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 80 << 20 // bytes of Go-managed memory; the binary's mapped pages come on top
)

// tuneGC applies hamcp's collector defaults where the user has not set GOGC or GOMEMLIMIT
// (the runtime has already applied those, and they win). Empty counts as not set, as it does
// for the runtime.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// An interval in which hamcp allocated less than idleBelowBytes is quiet (a home's state changes
// allocate far less, a tool call tens to hundreds of KB); the first quiet interval after a busy
// one, start-up included, hands the garbage back to the system (src/internal/idlegc). Half a
// second, so start-up's garbage (≈ 7 MB: the registry, the first state snapshot) is returned
// about a second after start rather than five; a check is one read of the runtime's counters.
const (
	idleCheckEvery = 500 * time.Millisecond
	idleBelowBytes = 512 << 10
)

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	switch level {
	case "debug":
		l = slog.LevelDebug
	case "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func serve(ctx context.Context, args []string) error {
	cmd := newCommand("serve", "Serve MCP over HTTP (Streamable HTTP at /mcp, legacy SSE at /sse).")
	cfg, err := cmd.load(args)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.LogLevel, os.Stderr)
	a, err := app.New(ctx, cfg, app.Options{Logger: logger})
	if err != nil {
		return cfg.Explain(err)
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return cfg.Explain(&config.Error{Option: "listen", Source: "configuration", Value: cfg.Listen, Reason: err.Error()})
	}
	logger.Info("hamcp serving", "version", app.Version, "mcp", "http://"+ln.Addr().String()+"/mcp", "home_assistant", cfg.HABaseURL())
	if a.SSHEnabled() {
		_, wait, err := a.ServeSSH(ctx, "")
		if err != nil {
			return err
		}
		defer wait()
	}
	return cfg.Explain(a.ServeHTTP(ctx, ln, app.Options{}))
}

func stdio(ctx context.Context, args []string) error {
	cmd := newCommand("stdio", "Serve one MCP session over stdin/stdout (for Claude Desktop and other stdio clients).\n"+
		"Requests read before stdin closes are answered before hamcp exits (within --shutdown-grace).")
	useDemo := cmd.fs.Bool("demo", false, "run against the built-in simulated home (no Home Assistant needed)")
	cfg, err := cmd.load(args)
	if err != nil {
		return err
	}
	// stdout carries the protocol: logs go to stderr only.
	logger := newLogger(cfg.LogLevel, os.Stderr)
	var a *app.App
	if *useDemo {
		d, err := startDemo(ctx, cfg, "", "127.0.0.1:0", logger)
		if err != nil {
			return cfg.Explain(err)
		}
		defer d.Close()
		a = d.App
	} else {
		a, err = app.New(ctx, cfg, app.Options{Logger: logger})
		if err != nil {
			return cfg.Explain(err)
		}
		defer a.Close()
	}
	a.WaitReady(ctx, 5*time.Second)
	return a.ServeStdio(ctx, os.Stdin, os.Stdout)
}

// demoDefaults are the demo's own defaults: it stays on this machine unless asked otherwise.
var demoDefaults = map[string]string{"listen": "127.0.0.1:8099"}

func runDemo(ctx context.Context, args []string) error {
	cmd := newCommand("demo", "Run hamcp against the built-in simulated home (no Home Assistant needed).\n"+
		"The demo keeps hamcp's per-IP rate limit (--rate-limit, 100 requests a minute) and session caps; --rate-limit 0 turns them off.")
	cmd.defaults, cmd.noOptionsFile = demoDefaults, true
	infoFile := cmd.fs.String("info-file", "", "write {mcp_url, token, ha_url, ha_token, sandbox_dir, …} as JSON here once ready (scripts read the token there)")
	noAuth := cmd.fs.Bool("no-auth", false, "serve /mcp without authentication (loopback only; for the conformance suite and the Inspector)")
	dir := cmd.fs.String("dir", "", "keep the simulated home's files (sandbox, recorder DB) in this directory instead of a temporary one")
	panelListen := cmd.fs.String("panel-listen", "127.0.0.1:0", "loopback address the hamcp panel listens on (port 0: any free port; the banner prints it)")
	conf := cmd.fs.Bool("conformance", false, "add the MCP conformance suite's fixture tools, resources and prompts (test_*, test://…)")
	cfg, err := cmd.load(args)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.LogLevel, os.Stderr)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return cfg.Explain(&config.Error{Option: "listen", Source: "configuration", Value: cfg.Listen, Reason: err.Error()})
	}
	if *noAuth {
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
			ln.Close()
			return fmt.Errorf("flag --no-auth is only allowed on a loopback address (e.g. --listen 127.0.0.1:8099), not %s", cfg.Listen)
		}
	}
	if host, _, err := net.SplitHostPort(*panelListen); err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
		ln.Close()
		return fmt.Errorf("flag --panel-listen %q: give a loopback address and port such as 127.0.0.1:8098 (the demo's panel "+
			"speaks for its demo administrator, so it answers this machine only)", *panelListen)
	}
	d, err := startDemo(ctx, cfg, *dir, *panelListen, logger)
	if err != nil {
		ln.Close()
		return cfg.Explain(err)
	}
	defer d.Close()
	if *conf {
		d.App.EnableConformance()
	}
	d.App.WaitReady(ctx, 5*time.Second)
	d.Info.MCPURL = "http://" + ln.Addr().String() + "/mcp"
	if d.App.Config.ExternalURL == "" && !*noAuth {
		// OAuth clients (the Inspector, mcp-remote, Claude Code) can log in through the simulated HA.
		d.App.Config.ExternalURL = "http://" + ln.Addr().String()
	}
	if *noAuth {
		d.Info.Token = ""
	}
	if *infoFile != "" {
		if err := d.WriteInfo(*infoFile); err != nil {
			return fmt.Errorf("--info-file: %w", err)
		}
	}
	if d.App.SSHEnabled() {
		addr, wait, err := d.App.ServeSSH(ctx, "127.0.0.1:"+strconv.Itoa(cfg.SSHPort))
		if err != nil {
			return err
		}
		defer wait()
		d.Info.SSH = addr
	}
	printBanner(d.Info, *noAuth, cfg.RateLimit, toolsLine(d.App))
	o := app.Options{NoAuth: *noAuth}
	if cfg.RateLimit == 0 {
		// Off means off in the demo: a client that opens a session per run (the conformance
		// suite, load tests) and never ends them would otherwise meet the session caps on its
		// second or third run, 30 minutes before the idle ones expire.
		o.MaxSessionsPerIP, o.MaxSessionsPerToken = math.MaxInt32, math.MaxInt32
	}
	return cfg.Explain(d.App.ServeHTTP(ctx, ln, o))
}

// toolsLine says how many tools the demo offers and how: with the simulated Hubitat hub they pass
// auto mode's budget, and a user who expects to see 116 tools in their client should know why
// they see six.
func toolsLine(a *app.App) string {
	enabled := len(a.Builder.Tools(false))
	if _, mode := a.Builder.Listed(false); mode == toolkit.ModeSearch {
		return fmt.Sprintf("%d, behind %s (tool_mode %s; --tool-mode all lists them all)", enabled, toolkit.SearchToolName, a.Config.ToolMode)
	}
	return fmt.Sprintf("%d, all listed (tool_mode %s)", enabled, a.Config.ToolMode)
}

func printBanner(i demoInfo, noAuth bool, rateLimit int, tools string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nhamcp %s — demo home is running\n\n", app.Version)
	fmt.Fprintf(&b, "  MCP URL          %s\n", i.MCPURL)
	if noAuth {
		fmt.Fprintf(&b, "  MCP token        (none: --no-auth)\n")
	} else {
		fmt.Fprintf(&b, "  MCP token        %s\n", i.Token)
	}
	if i.PanelURL != "" {
		fmt.Fprintf(&b, "  hamcp panel      %s   (approvals, clients, activity; as a demo user)\n", i.PanelURL)
	}
	fmt.Fprintf(&b, "  Simulated HA     %s   (token %s)\n", i.HAURL, i.HAToken)
	if i.HubitatURL != "" {
		fmt.Fprintf(&b, "  Simulated Hubitat %s   (Maker API and hub admin; --hubitat-admin-read/--hubitat-admin-write)\n", i.HubitatURL)
	}
	fmt.Fprintf(&b, "  Tools            %s\n", tools)
	fmt.Fprintf(&b, "  Sandbox (/config) %s\n", i.SandboxDir)
	for _, l := range i.Logins {
		role := "administrator"
		if !l.Admin {
			role = "not an administrator"
		}
		fmt.Fprintf(&b, "  HA login         %s / %s (%s)\n", l.Username, l.Password, role)
	}
	if i.SSH != "" {
		fmt.Fprintf(&b, "  SSH (stdio)      ssh -p %s -i KEY hamcp@127.0.0.1\n", i.SSH[strings.LastIndex(i.SSH, ":")+1:])
	}
	if rateLimit > 0 {
		fmt.Fprintf(&b, "  Rate limit       %d requests a minute per IP (--rate-limit 0 turns it off)\n", rateLimit)
	} else {
		fmt.Fprintf(&b, "  Rate limit       off, and no session caps\n")
	}
	b.WriteString("\n")
	auth := ""
	if !noAuth {
		auth = fmt.Sprintf("-H 'Authorization: Bearer %s' ", i.Token)
	}
	fmt.Fprintf(&b, "Try:  curl -s %s %s-H 'Content-Type: application/json' \\\n", i.MCPURL, auth)
	fmt.Fprintf(&b, "        -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}'\n\nPress Ctrl+C to stop.\n")
	fmt.Fprint(os.Stderr, b.String())
}
