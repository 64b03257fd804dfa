package homeassistant

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/sim/hass"
	"github.com/hamcp/hamcp/dev/testkit"
)

// docs/home-assistant-fidelity.md has one row for every WebSocket command and REST path hamcp's
// clients send and the simulator answers, naming the Home Assistant (or Supervisor, or HACS)
// handler it was checked against. This test finds the calls in the source and the simulator's
// tables and fails on a call without a row, and on a row whose call is gone.

const fidelityDoc = "../../docs/home-assistant-fidelity.md"

// wireRow is one table row: the call, and who makes it (client, sim or both).
type wireRow struct {
	section string // ws, rest, supervisor
	call    string // "get_states", "GET /api/states/{}"
	client  bool
	sim     bool
	line    int
}

var (
	rowRe   = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|\\s*(client|sim|both)\\s*\\|")
	paramRe = regexp.MustCompile(`\{[^}]*\}`)
)

// parseFidelityDoc reads the rows of the doc's tables, sorted into sections by the "## " headings
// (WebSocket, REST, Supervisor; HACS commands are WebSocket commands).
func parseFidelityDoc(text string) (rows []wireRow, problems []string) {
	section := ""
	for i, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			switch l := strings.ToLower(h); {
			case strings.Contains(l, "websocket"), strings.Contains(l, "hacs"):
				section = "ws"
			case strings.Contains(l, "supervisor"):
				section = "supervisor"
			case strings.Contains(l, "rest"):
				section = "rest"
			default:
				section = ""
			}
			continue
		}
		m := rowRe.FindStringSubmatch(line)
		if m == nil || section == "" {
			continue
		}
		r := wireRow{section: section, call: m[1], client: m[2] != "sim", sim: m[2] != "client", line: i + 1}
		if section != "ws" {
			method, path, ok := strings.Cut(m[1], " ")
			if !ok || !strings.HasPrefix(path, "/") {
				problems = append(problems, "line "+itoa(i+1)+": a REST row's call is `METHOD /path`, not "+m[1])
				continue
			}
			r.call = method + " " + normPath(path)
		}
		rows = append(rows, r)
	}
	return rows, problems
}

func normPath(p string) string { return paramRe.ReplaceAllString(p, "{}") }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// goSource returns the non-test Go files of dirs with comments and import blocks removed, so that
// only code can name a call.
func goSource(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = stripGo(string(b))
		}
	}
	return out
}

var (
	importRe      = regexp.MustCompile(`(?s)\nimport \(.*?\n\)|\nimport "[^"]*"`)
	lineCommentRe = regexp.MustCompile(`(?m)^\s*//.*$|\s//.*$`)
)

func stripGo(src string) string {
	src = importRe.ReplaceAllString(src, "\n")
	return lineCommentRe.ReplaceAllString(src, "")
}

var (
	// A command is the string a call helper sends: c.Call(ctx, "x", ...), s.call(ctx, "x", ...),
	// callAs[T](ctx, c, "x", ...), c.lovelaceCall(ctx, "x", ...), HACommand(ctx, "x", ...) or a
	// subscription's {"type": "x"}.
	wsCallRe = regexp.MustCompile(`(?:\b(?:call|Call|lovelaceCall|HACommand)|\bcallAs\[[^(]*\])\(ctx,\s*(?:c,\s*)?"([a-z_]+(?:/[a-z_]+)*)"`)
	wsTypeRe = regexp.MustCompile(`"type":\s*"([a-z_]+(?:/[a-z_]+)*)"`)
	// Commands built from a domain or a registry kind.
	helperVerbRe   = regexp.MustCompile(`domain\s*\+\s*"/([a-z_]+)"`)
	registryVerbRe = regexp.MustCompile(`\.command\("([a-z_]+)"\)`)
	registryKindRe = regexp.MustCompile(`Registry[A-Za-z]+\s+RegistryKind\s*=\s*"([a-z_]+)"`)
	// A path literal: "/api/states/", "/backups/new/full", "/reload".
	pathLitRe = regexp.MustCompile(`"(/[A-Za-z0-9_./{}-]*)"`)
	// A piece appended to a path: entryPath(id) + "/reload".
	toolSupervisorRe = regexp.MustCompile(`(?:\.Logs\(ctx,\s*|\.Do\(ctx,\s*http\.Method\w+,\s*|path\s*:?=\s*)"(/[a-z_/]+)"`)
	configKindRe     = regexp.MustCompile(`Kind[A-Za-z]+\s+ConfigKind\s*=\s*"([a-z_]+)"`)
	appendedRe       = regexp.MustCompile(`\+\s*"(/[a-z_/]{2,})"`)
)

// clientCommands lists the WebSocket commands hamcp's client code sends.
func clientCommands(t *testing.T) map[string]bool {
	t.Helper()
	src := goSource(t, ".", "../oauth")
	cmds := map[string]bool{}
	var kinds, helperVerbs, registryVerbs []string
	for _, text := range src {
		for _, m := range wsCallRe.FindAllStringSubmatch(text, -1) {
			cmds[m[1]] = true
		}
		for _, m := range wsTypeRe.FindAllStringSubmatch(text, -1) {
			cmds[m[1]] = true
		}
		for _, m := range helperVerbRe.FindAllStringSubmatch(text, -1) {
			helperVerbs = append(helperVerbs, m[1])
		}
		for _, m := range registryVerbRe.FindAllStringSubmatch(text, -1) {
			registryVerbs = append(registryVerbs, m[1])
		}
		for _, m := range registryKindRe.FindAllStringSubmatch(text, -1) {
			kinds = append(kinds, m[1])
		}
	}
	for _, d := range HelperDomains {
		for _, v := range helperVerbs {
			cmds[d+"/"+v] = true
		}
	}
	for _, k := range kinds {
		for _, v := range registryVerbs {
			cmds[RegistryKind(k).command(v)] = true
		}
	}
	return cmds
}

// clientPaths lists the paths of the Home Assistant client (REST and OAuth: whole paths, and the
// pieces it appends to a path, such as "/reload") and of the Supervisor client.
func clientPaths(t *testing.T) (ha, supervisor map[string]bool) {
	t.Helper()
	ha, supervisor = map[string]bool{}, map[string]bool{}
	helperVerbs := map[string]bool{}
	for _, text := range goSource(t, ".", "../oauth") {
		for _, m := range pathLitRe.FindAllStringSubmatch(text, -1) {
			if p := m[1]; strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/auth/") {
				ha[p] = true
			}
		}
		for _, m := range helperVerbRe.FindAllStringSubmatch(text, -1) {
			helperVerbs["/"+m[1]] = true
		}
	}
	for _, text := range goSource(t, ".") {
		// "/api/config/" + kind + "/config/": the kinds are pieces of a path too.
		for _, m := range configKindRe.FindAllStringSubmatch(text, -1) {
			ha[m[1]] = true
		}
		for _, m := range appendedRe.FindAllStringSubmatch(text, -1) {
			if !helperVerbs[m[1]] && !strings.HasPrefix(m[1], "/api") {
				ha[m[1]] = true
			}
		}
	}
	for _, text := range goSource(t, "../supervisor") {
		for _, m := range pathLitRe.FindAllStringSubmatch(text, -1) {
			if len(m[1]) > 1 {
				supervisor[m[1]] = true
			}
		}
	}
	// Tools call the Supervisor client with paths of their own.
	for _, text := range goSource(t, "../tools/hatools") {
		for _, m := range toolSupervisorRe.FindAllStringSubmatch(text, -1) {
			supervisor[m[1]] = true
		}
	}
	return ha, supervisor
}

// simRoutes lists the simulator's routes, parameters written "{}".
func simRoutes(t *testing.T) (ha, supervisor map[string]bool) {
	t.Helper()
	h := simHome(t)
	a, s := h.Routes()
	ha, supervisor = map[string]bool{}, map[string]bool{}
	for _, r := range a {
		ha[normRoute(r)] = true
	}
	for _, r := range s {
		supervisor[normRoute(r)] = true
	}
	// The login pages and the token endpoint are served by dev/sim/haauth's own mux.
	b, err := os.ReadFile("../../dev/sim/haauth/provider.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`mux\.HandleFunc\("(?:([A-Z]+) )?(/auth/[^"]*)"`).FindAllStringSubmatch(string(b), -1) {
		method := m[1]
		if method == "" {
			method = "ANY"
		}
		ha[method+" "+normPath(m[2])] = true
	}
	return ha, supervisor
}

func normRoute(r string) string {
	method, path, _ := strings.Cut(r, " ")
	return method + " " + normPath(path)
}

// clientBuilds reports whether the client can build path: each piece between parameters is made
// of its literals (a trailing verb may come from a variable, so only the first piece must be).
func clientBuilds(path string, lits map[string]bool) bool {
	first := strings.Split(path, "{}")[0]
	return first == "" || testkit.BuiltFrom(first, lits) || testkit.BuiltFrom(strings.TrimSuffix(first, "/"), lits)
}

// pathCovered reports whether literal lit is part of a row's path, or a whole path the row
// matches ("/addons/self/info" for "/addons/{}/info").
func pathCovered(lit string, rows []wireRow, section string) bool {
	for _, r := range rows {
		if r.section != section || !r.client {
			continue
		}
		_, path, _ := strings.Cut(r.call, " ")
		if strings.Contains(path+"/", lit) {
			return true
		}
		pattern := "^" + strings.ReplaceAll(regexp.QuoteMeta(path), regexp.QuoteMeta("{}"), "[^/]+") + "$"
		if regexp.MustCompile(pattern).MatchString(lit) {
			return true
		}
	}
	return false
}

func TestFidelityDocCoversEveryWireCall(t *testing.T) {
	raw, err := os.ReadFile(fidelityDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows, problems := parseFidelityDoc(string(raw))
	for _, p := range problems {
		t.Error(p)
	}
	if len(rows) < 100 {
		t.Fatalf("only %d rows found in %s: are the tables' first columns `call` | who?", len(rows), fidelityDoc)
	}
	simWS := map[string]bool{}
	for _, c := range hass.WSCommandNames() {
		simWS[c] = true
	}
	clientWS := clientCommands(t)
	haLits, supLits := clientPaths(t)
	simHA, simSup := simRoutes(t)

	documented := map[string]wireRow{}
	for _, r := range rows {
		key := r.section + " " + r.call
		if prev, dup := documented[key]; dup {
			t.Errorf("%s:%d: `%s` already has a row (line %d)", fidelityDoc, r.line, r.call, prev.line)
		}
		documented[key] = r
	}
	has := func(section, call string, client bool) bool {
		r, ok := documented[section+" "+call]
		if !ok && section != "ws" {
			// A route the simulator serves for any method is documented under its real methods.
			_, path, _ := strings.Cut(call, " ")
			for k, rr := range documented {
				if strings.HasSuffix(k, " "+path) && rr.section == section {
					r, ok = rr, true
				}
			}
		}
		return ok && (client && r.client || !client && r.sim)
	}

	tests := []struct {
		name   string
		calls  map[string]bool
		sect   string
		client bool
	}{
		{"simulator WebSocket command", simWS, "ws", false},
		{"client WebSocket command", clientWS, "ws", true},
		{"simulator REST route", simHA, "rest", false},
		{"simulator Supervisor route", simSup, "supervisor", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range sortedKeys(tc.calls) {
				if !has(tc.sect, c, tc.client) {
					who := "sim"
					if tc.client {
						who = "client"
					}
					t.Errorf("%s `%s` has no row (marked %s or both) in %s", tc.name, c, who, fidelityDoc)
				}
			}
		})
	}
	t.Run("client path literal", func(t *testing.T) {
		for _, lit := range sortedKeys(haLits) {
			if !pathCovered(lit, rows, "rest") {
				t.Errorf("client REST path %q is in no client row of %s", lit, fidelityDoc)
			}
		}
		for _, lit := range sortedKeys(supLits) {
			if !pathCovered(lit, rows, "supervisor") {
				t.Errorf("Supervisor client path %q is in no client row of %s", lit, fidelityDoc)
			}
		}
	})
	t.Run("row whose call is gone", func(t *testing.T) {
		for _, r := range rows {
			method, path, _ := strings.Cut(r.call, " ")
			switch r.section {
			case "ws":
				if r.sim && !simWS[r.call] {
					t.Errorf("%s:%d: the simulator has no `%s` (mark the row client, or remove it)", fidelityDoc, r.line, r.call)
				}
				if r.client && !clientWS[r.call] {
					t.Errorf("%s:%d: the client sends no `%s` (mark the row sim, or remove it)", fidelityDoc, r.line, r.call)
				}
			case "rest", "supervisor":
				simSet, lits := simHA, haLits
				if r.section == "supervisor" {
					simSet, lits = simSup, supLits
				}
				if r.sim && !simSet[r.call] && !simSet["ANY "+path] {
					t.Errorf("%s:%d: the simulator serves no `%s %s`", fidelityDoc, r.line, method, path)
				}
				if r.client && !clientBuilds(path, lits) {
					t.Errorf("%s:%d: the client builds no `%s`", fidelityDoc, r.line, path)
				}
			}
		}
	})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestFidelityDocParser(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
		bad  int
	}{
		{"ws row", "## WebSocket (core)\n| `get_states` | both | x |\n", []string{"ws get_states c s"}, 0},
		{"rest params normalised", "## REST (core)\n| `GET /api/states/{entity_id}` | client | x |\n", []string{"rest GET /api/states/{} c -"}, 0},
		{"supervisor", "## Supervisor REST\n| `POST /backups/{slug}/restore/full` | sim | x |\n", []string{"supervisor POST /backups/{}/restore/full - s"}, 0},
		{"hacs is websocket", "## HACS\n| `hacs/info` | sim | x |\n", []string{"ws hacs/info - s"}, 0},
		{"rest row without method", "## REST\n| `/api/states` | both | x |\n", nil, 1},
		{"row outside a section", "| `get_states` | both | x |\n", nil, 0},
		{"header rows skipped", "## WebSocket\n| call | who | handler |\n|---|---|---|\n", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, problems := parseFidelityDoc(tc.doc)
			var got []string
			for _, r := range rows {
				c, s := "-", "-"
				if r.client {
					c = "c"
				}
				if r.sim {
					s = "s"
				}
				got = append(got, r.section+" "+r.call+" "+c+" "+s)
			}
			if strings.Join(got, ";") != strings.Join(tc.want, ";") || len(problems) != tc.bad {
				t.Fatalf("got %q, %d problems %q; want %q, %d", got, len(problems), problems, tc.want, tc.bad)
			}
		})
	}
}

func TestFidelityDocPathHelpers(t *testing.T) {
	lits := map[string]bool{"/api/config/config_entries/flow": true, "/": true, "/api/states/": true, "/reload": true}
	tests := []struct {
		path string
		want bool
	}{
		{"/api/config/config_entries/flow/{}", true},
		{"/api/states/{}", true},
		{"/api/states", false},
		{"/api/template", false},
	}
	for _, tc := range tests {
		if got := clientBuilds(tc.path, lits); got != tc.want {
			t.Errorf("clientBuilds(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
	rows := []wireRow{{section: "supervisor", call: "GET /addons/{}/info", client: true}, {section: "supervisor", call: "GET /os/info", sim: true}}
	covered := []struct {
		lit  string
		want bool
	}{
		{"/addons/self/info", true},
		{"/addons/", true},
		{"/info", true},
		{"/os/info", false}, // only a sim row has it
		{"/addons/a/b/info", false},
	}
	for _, tc := range covered {
		if got := pathCovered(tc.lit, rows, "supervisor"); got != tc.want {
			t.Errorf("pathCovered(%q) = %v, want %v", tc.lit, got, tc.want)
		}
	}
}
