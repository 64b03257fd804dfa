package hubitat

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
)

// docs/hubitat-fidelity.md has one row for every hub route hamcp's client (src/hubitat) calls and
// the simulated hub (dev/sim/hubitat) serves, naming where upstream calls it. This test reads the
// routes out of the source of both packages, every non-test file, so a route added in a new file
// needs a row in the same change, and it fails on a row whose route is gone.

const fidelityDoc = "../../docs/hubitat-fidelity.md"

type hubRow struct {
	section string // maker, admin, events
	method  string
	path    string // parameters written "{}"
	client  bool
	sim     bool
	line    int
}

var (
	hubRowRe   = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|\\s*(client|sim|both)\\s*\\|")
	hubParamRe = regexp.MustCompile(`\{[^}]*\}`)
	methods    = map[string]bool{"GET": true, "POST": true, "PUT": true, "DELETE": true, "PATCH": true, "ANY": true}
)

// parseHubFidelityDoc reads the table rows under the "## Maker API", "## Admin" and "## Events"
// headings; a row's call is `METHOD /path`.
func parseHubFidelityDoc(text string) (rows []hubRow, problems []string) {
	section := ""
	for i, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			switch l := strings.ToLower(h); {
			case strings.HasPrefix(l, "maker"):
				section = "maker"
			case strings.HasPrefix(l, "admin"):
				section = "admin"
			case strings.HasPrefix(l, "event"):
				section = "events"
			default:
				section = ""
			}
			continue
		}
		m := hubRowRe.FindStringSubmatch(line)
		if m == nil || section == "" {
			continue
		}
		method, path, ok := strings.Cut(m[1], " ")
		if !ok || !methods[method] || !strings.HasPrefix(path, "/") {
			problems = append(problems, "line "+strconv.Itoa(i+1)+": a row's call is `METHOD /path`, not "+m[1])
			continue
		}
		rows = append(rows, hubRow{section: section, method: method, path: hubNormPath(path),
			client: m[2] != "sim", sim: m[2] != "client", line: i + 1})
	}
	return rows, problems
}

func hubNormPath(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return hubParamRe.ReplaceAllString(p, "{}")
}

var (
	hubImportRe  = regexp.MustCompile(`(?s)\nimport \(.*?\n\)|\nimport "[^"]*"`)
	hubCommentRe = regexp.MustCompile(`(?m)^\s*//.*$|\s//.*$`)
	// A path literal, query and all: "/hub/backupDB?fileName=latest", "/devices/".
	hubPathLitRe = regexp.MustCompile(`"(/[A-Za-z0-9_./{}?=&-]*)"`)
	// A mux pattern: "GET /login", "GET /apps/api/{app}/{rest...}".
	simPatternRe = regexp.MustCompile(`"(GET|POST|PUT|DELETE|PATCH) (/[^"\s]*)"`)
	// A route registered as (method, path expression): gate("GET", "/hub2/zwaveInfo", …),
	// gate("GET", "/"+kind+"/ajax/code", …), route(http.MethodPost, "/room/save", …).
	simMethodArgRe = regexp.MustCompile(`(?:"(GET|POST|PUT|DELETE|PATCH)"|http\.Method(Get|Post|Put|Delete|Patch))\s*,\s*("[^"\n]*"[^,\n]*),`)
	simExprPartRe  = regexp.MustCompile(`"([^"]*)"|[^"+\s][^"+]*`)
	// The Maker API dispatch: seg[0] == "devices", rest[0] == "events".
	simMakerSegRe = regexp.MustCompile(`\b(?:seg|rest)\[\d\]\s*==\s*"([A-Za-z]+)"`)
)

// hubSource returns the non-test Go files of dir with comments and imports removed, so that only
// code names a route.
func hubSource(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := hubImportRe.ReplaceAllString(string(b), "\n")
		out[f] = hubCommentRe.ReplaceAllString(src, "")
	}
	if len(out) == 0 {
		t.Fatalf("no Go source in %s", dir)
	}
	return out
}

// clientLiterals are the path literals of the client, queries dropped ("/" alone is only glue).
func clientLiterals(src map[string]string) map[string]bool {
	lits := map[string]bool{}
	for _, text := range src {
		for _, m := range hubPathLitRe.FindAllStringSubmatch(text, -1) {
			if p, _, _ := strings.Cut(m[1], "?"); p != "/" && p != "" {
				lits[p] = true
			}
		}
	}
	return lits
}

// simRoutes are the simulated hub's routes as "METHOD /path" ({} for parameters and for any
// part of the path built from a variable), and the words of its Maker API dispatch.
func simRoutes(src map[string]string) (routes map[string]bool, makerWords map[string]bool) {
	routes, makerWords = map[string]bool{}, map[string]bool{}
	for _, text := range src {
		for _, m := range simPatternRe.FindAllStringSubmatch(text, -1) {
			routes[m[1]+" "+hubNormPath(m[2])] = true
		}
		for _, m := range simMethodArgRe.FindAllStringSubmatch(text, -1) {
			method := m[1]
			if method == "" {
				method = strings.ToUpper(m[2])
			}
			if p := pathOfExpr(m[3]); strings.HasPrefix(p, "/") {
				routes[method+" "+p] = true
			}
		}
		for _, m := range simMakerSegRe.FindAllStringSubmatch(text, -1) {
			makerWords[m[1]] = true
		}
	}
	return routes, makerWords
}

// pathOfExpr turns `"/"+kind+"/ajax/code"` into "/{}/ajax/code".
func pathOfExpr(expr string) string {
	var b strings.Builder
	for _, m := range simExprPartRe.FindAllStringSubmatch(strings.TrimSpace(expr), -1) {
		if strings.HasPrefix(m[0], `"`) {
			b.WriteString(m[1])
		} else {
			b.WriteString("{}")
		}
	}
	return hubNormPath(b.String())
}

// pathMatches reports whether two paths with {} parameters can name the same route.
func pathMatches(a, b string) bool {
	if a == b {
		return true
	}
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		if as[i] != bs[i] && as[i] != "{}" && bs[i] != "{}" {
			return false
		}
	}
	return true
}

// clientBuilds reports whether every piece of path between its parameters is made of the
// client's literals (with "/" as glue), with or without its trailing slash.
func clientBuilds(path string, lits map[string]bool) bool {
	glued := map[string]bool{"/": true}
	for l := range lits {
		glued[l] = true
	}
	for _, piece := range strings.Split(path, "{}") {
		if piece != "" && !testkit.BuiltFrom(piece, glued) && !testkit.BuiltFrom(strings.TrimSuffix(piece, "/"), glued) {
			return false
		}
	}
	return true
}

// literalCovered reports whether a client literal is part of a client row's path, or a whole
// path a row matches.
func literalCovered(lit string, rows []hubRow) bool {
	for _, r := range rows {
		if !r.client {
			continue
		}
		if strings.Contains(r.path+"/", lit) || pathMatches(r.path, hubNormPath(lit)) {
			return true
		}
	}
	return false
}

func TestHubitatFidelityDocCoversEveryRoute(t *testing.T) {
	raw, err := os.ReadFile(fidelityDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows, problems := parseHubFidelityDoc(string(raw))
	for _, p := range problems {
		t.Error(p)
	}
	if len(rows) < 30 {
		t.Fatalf("only %d rows found in %s: are the tables' first columns `METHOD /path` | who?", len(rows), fidelityDoc)
	}
	seen := map[string]int{}
	for _, r := range rows {
		key := r.method + " " + r.path
		if prev, dup := seen[key]; dup {
			t.Errorf("%s:%d: `%s` already has a row (line %d)", fidelityDoc, r.line, key, prev)
		}
		seen[key] = r.line
	}
	client := hubSource(t, ".")
	lits := clientLiterals(client)
	// The push receiver's path is mounted by the integration (PushPath), not the client.
	buildLits := clientLiterals(hubSource(t, "../integrations/hubitat"))
	for l := range lits {
		buildLits[l] = true
	}
	simAll, makerWords := simRoutes(hubSource(t, "../../dev/sim/hubitat"))

	t.Run("client path literal", func(t *testing.T) {
		for _, lit := range sortedKeys(lits) {
			if !literalCovered(lit, rows) {
				t.Errorf("client path %q is in no client row of %s", lit, fidelityDoc)
			}
		}
	})
	t.Run("simulator route", func(t *testing.T) {
		for _, route := range sortedKeys(simAll) {
			method, path, _ := strings.Cut(route, " ")
			if strings.HasPrefix(path, "/apps/api/") {
				continue // the Maker API dispatch, checked by word below
			}
			if !hasSimRow(rows, method, path) {
				t.Errorf("simulator route `%s` has no row (marked sim or both) in %s", route, fidelityDoc)
			}
		}
	})
	t.Run("simulator Maker API word", func(t *testing.T) {
		for _, w := range sortedKeys(makerWords) {
			if !makerWordDocumented(rows, w) {
				t.Errorf("the simulator's Maker API dispatch answers %q, in no sim row of %s", w, fidelityDoc)
			}
		}
	})
	t.Run("push receiver", func(t *testing.T) {
		if strings.Contains(strings.Join(mapValues(client), "\n"), "func (c *Client) PushHandler(") && !hasEventsPush(rows) {
			t.Errorf("the client takes postURL pushes (PushHandler): %s needs a `POST /…/{secret}` row under ## Events", fidelityDoc)
		}
	})
	t.Run("row whose route is gone", func(t *testing.T) {
		for _, r := range rows {
			if r.client && !clientBuilds(r.path, buildLits) {
				t.Errorf("%s:%d: the client builds no `%s` (mark the row sim, or remove it)", fidelityDoc, r.line, r.path)
			}
			if !r.sim {
				continue
			}
			switch {
			case r.section == "events" && strings.HasSuffix(r.path, "/{}") && r.method == "POST":
				// The push goes to hamcp; the simulator is its sender (events.go's pushLoop).
			case strings.HasPrefix(r.path, "/apps/api/{}/"):
				for _, w := range strings.Split(strings.TrimPrefix(r.path, "/apps/api/{}/"), "/") {
					if w != "{}" && !makerWords[w] {
						t.Errorf("%s:%d: the simulator's Maker API dispatch has no %q (mark the row client, or remove it)", fidelityDoc, r.line, w)
					}
				}
			case !simServes(simAll, r.method, r.path):
				t.Errorf("%s:%d: the simulator serves no `%s %s` (mark the row client, or remove it)", fidelityDoc, r.line, r.method, r.path)
			}
		}
	})
}

func hasSimRow(rows []hubRow, method, path string) bool {
	for _, r := range rows {
		if r.sim && (r.method == method || r.method == "ANY") && pathMatches(r.path, path) {
			return true
		}
	}
	return false
}

func simServes(routes map[string]bool, method, path string) bool {
	for route := range routes {
		m, p, _ := strings.Cut(route, " ")
		if (m == method || method == "ANY") && pathMatches(p, path) {
			return true
		}
	}
	return false
}

func makerWordDocumented(rows []hubRow, w string) bool {
	for _, r := range rows {
		if r.sim && r.section == "maker" && strings.Contains(r.path+"/", "/"+w+"/") {
			return true
		}
	}
	return false
}

func hasEventsPush(rows []hubRow) bool {
	for _, r := range rows {
		if r.section == "events" && r.client && r.method == "POST" && strings.HasSuffix(r.path, "/{}") {
			return true
		}
	}
	return false
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestHubitatFidelityDocHelpers(t *testing.T) {
	rows, problems := parseHubFidelityDoc("## Maker API\n| call | who |\n|---|---|\n| `GET /apps/api/{app}/devices/{id}` | both | x |\n" +
		"## Admin routes\n| `POST /hub/reboot` | client | x |\n| `/hub/x` | sim | x |\n## Other\n| `GET /y` | both |\n")
	if len(rows) != 2 || len(problems) != 1 || rows[0].path != "/apps/api/{}/devices/{}" || rows[1].section != "admin" || rows[1].sim {
		t.Fatalf("rows %+v problems %q", rows, problems)
	}
	if p := pathOfExpr(`"/"+string(kind)+"/ajax/code"`); p != "/{}/ajax/code" {
		t.Errorf("pathOfExpr = %q", p)
	}
	routes, words := simRoutes(map[string]string{"a.go": `mux.HandleFunc("GET /login", f)
	gate("GET", "/"+kind+"/ajax/code", f)
	route(http.MethodPost, "/room/save", f)
	case len(seg) == 1 && seg[0] == "rooms":`})
	want := []string{"GET /login", "GET /{}/ajax/code", "POST /room/save"}
	if got := sortedKeys(routes); strings.Join(got, ";") != strings.Join(sortedStrings(want), ";") || !words["rooms"] {
		t.Errorf("simRoutes = %q, %v", got, words)
	}
	lits := map[string]bool{"/apps/api/": true, "/devices/": true, "/events": true, "/ajax/code": true}
	for path, want := range map[string]bool{"/apps/api/{}/devices/{}/events": true, "/{}/ajax/code": true, "/hub/reboot": false} {
		if got := clientBuilds(path, lits); got != want {
			t.Errorf("clientBuilds(%q) = %v", path, got)
		}
	}
	if !pathMatches("/app/ajax/code", "/{}/ajax/code") || pathMatches("/a/b", "/a/b/c") {
		t.Error("pathMatches")
	}
}

func sortedStrings(s []string) []string { sort.Strings(s); return s }
