// Command hamcp is a Model Context Protocol server for Home Assistant.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/demo"
	"github.com/hamcp/hamcp/src/sim"
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

func newFlags(name, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nUsage: hamcp %s [options]\n\nOptions:\n", summary, name)
		fs.PrintDefaults()
	}
	return fs
}

func loadConfig(fs *flag.FlagSet, args []string, noOptionsFile bool) (*config.Config, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q; run with --help for the options", fs.Arg(0))
	}
	return config.Load(config.Sources{Flags: fs, NoOptionsFile: noOptionsFile})
}

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
	fs := newFlags("serve", "Serve MCP over HTTP (Streamable HTTP at /mcp, legacy SSE at /sse).")
	config.BindFlags(fs)
	cfg, err := loadConfig(fs, args, false)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.LogLevel, os.Stderr)
	a, err := app.New(ctx, cfg, app.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return &config.Error{Option: "listen", Source: "configuration", Value: cfg.Listen, Reason: err.Error()}
	}
	logger.Info("hamcp serving", "version", app.Version, "mcp", "http://"+ln.Addr().String()+"/mcp", "home_assistant", cfg.HABaseURL())
	if a.SSHEnabled() {
		_, wait, err := a.ServeSSH(ctx, "")
		if err != nil {
			return err
		}
		defer wait()
	}
	return a.ServeHTTP(ctx, ln, app.Options{})
}

func stdio(ctx context.Context, args []string) error {
	fs := newFlags("stdio", "Serve one MCP session over stdin/stdout (for Claude Desktop and other stdio clients).")
	useDemo := fs.Bool("demo", false, "run against the built-in simulated home")
	config.BindFlags(fs)
	cfg, err := loadConfig(fs, args, false)
	if err != nil {
		return err
	}
	// stdout carries the protocol: logs go to stderr only.
	logger := newLogger(cfg.LogLevel, os.Stderr)
	var a *app.App
	if *useDemo {
		d, err := demo.Start(ctx, cfg, sim.Options{}, logger)
		if err != nil {
			return err
		}
		defer d.Close()
		a = d.App
	} else {
		a, err = app.New(ctx, cfg, app.Options{Logger: logger})
		if err != nil {
			return err
		}
		defer a.Close()
	}
	a.WaitReady(ctx, 5*time.Second)
	return a.ServeStdio(ctx, os.Stdin, os.Stdout)
}

// defaultListen is the listen option's default (config.Config.Listen).
const defaultListen = ":8099"

func runDemo(ctx context.Context, args []string) error {
	fs := newFlags("demo", "Run hamcp against the built-in simulated home (no Home Assistant needed).")
	infoFile := fs.String("info-file", "", "write {mcp_url, token, ha_url, ha_token, sandbox_dir, …} as JSON here once ready")
	noAuth := fs.Bool("no-auth", false, "serve /mcp without authentication (loopback only; for the conformance suite and the Inspector)")
	dir := fs.String("dir", "", "keep the simulated home's files (sandbox, recorder DB) in this directory instead of a temporary one")
	config.BindFlags(fs)
	cfg, err := loadConfig(fs, args, true)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.LogLevel, os.Stderr)
	listen := cfg.Listen
	if listen == defaultListen {
		// The demo stays on this machine unless asked otherwise.
		listen = "127.0.0.1" + defaultListen
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", listen, err)
	}
	if *noAuth {
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
			ln.Close()
			return fmt.Errorf("--no-auth is only allowed on a loopback address (e.g. --listen 127.0.0.1:8099), not %s", listen)
		}
	}
	d, err := demo.Start(ctx, cfg, sim.Options{Dir: *dir}, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer d.Close()
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
	printBanner(d.Info, *noAuth)
	return d.App.ServeHTTP(ctx, ln, app.Options{NoAuth: *noAuth})
}

func printBanner(i demo.Info, noAuth bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nhamcp %s — demo home is running\n\n", app.Version)
	fmt.Fprintf(&b, "  MCP URL          %s\n", i.MCPURL)
	if noAuth {
		fmt.Fprintf(&b, "  MCP token        (none: --no-auth)\n")
	} else {
		fmt.Fprintf(&b, "  MCP token        %s\n", i.Token)
	}
	fmt.Fprintf(&b, "  Simulated HA     %s   (token %s)\n", i.HAURL, i.HAToken)
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
	b.WriteString("\n")
	fmt.Fprintf(&b, "Try:  curl -s %s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n", i.MCPURL, i.Token)
	fmt.Fprintf(&b, "        -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}'\n\nPress Ctrl+C to stop.\n")
	fmt.Fprint(os.Stderr, b.String())
}
