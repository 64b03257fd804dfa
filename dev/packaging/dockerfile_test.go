package packaging

import (
	"bytes"
	"encoding/json"
	"go/version"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/config"
)

func dockerfile(t *testing.T) *Dockerfile {
	t.Helper()
	d, err := ParseDockerfile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	return d
}

var reGoImage = regexp.MustCompile(`^golang:([0-9]+\.[0-9]+(?:\.[0-9]+)?)-alpine[0-9.]*$`)

// TestDockerfileStages: a Go build stage that runs the same script as the tests, then Home
// Assistant's base image chosen by BUILD_FROM with a default (supervisors since 2026.04 pass none).
func TestDockerfileStages(t *testing.T) {
	t.Parallel()
	d := dockerfile(t)
	if len(d.Stages) != 2 {
		t.Fatalf("Dockerfile has %d stages, want 2 (build, then the base image)", len(d.Stages))
	}
	build, final := d.Stages[0], d.Stages[1]
	def := d.GlobalArgs["BUILD_FROM"]
	if base, tag, ok := strings.Cut(def, ":"); !ok || base != "ghcr.io/home-assistant/base" || tag == "" || tag == "latest" {
		t.Errorf("ARG BUILD_FROM default = %q, want ghcr.io/home-assistant/base:<alpine version>", def)
	}
	if final.From != "${BUILD_FROM}" && final.From != "$BUILD_FROM" {
		t.Errorf("final stage FROM %s, want ${BUILD_FROM}", final.From)
	}
	m := reGoImage.FindStringSubmatch(build.From)
	if build.Name != "build" || m == nil {
		t.Fatalf("first stage = FROM %s AS %s, want golang:<version>-alpine AS build", build.From, build.Name)
	}
	raw, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(raw)
	if goLine == nil {
		t.Fatal("go.mod has no go directive")
	}
	if version.Compare("go"+m[1], "go"+string(goLine[1])) < 0 {
		t.Errorf("the build stage's Go %s is older than go.mod's %s (GOTOOLCHAIN=local refuses to download one)", m[1], goLine[1])
	}
	// The shipped binary carries the standard library's security fixes that go.mod's toolchain line
	// names (govulncheck in .ci/lint.sh checks against it).
	if tc := regexp.MustCompile(`(?m)^toolchain (go[0-9.]+)$`).FindSubmatch(raw); tc != nil && version.Compare("go"+m[1], string(tc[1])) < 0 {
		t.Errorf("the build stage's Go %s is older than go.mod's toolchain %s", m[1], tc[1])
	}
	runs := build.Find("RUN")
	if len(runs) == 0 || !strings.Contains(runs[len(runs)-1].Args, "./addon/compile-hamcp.sh /out/hamcp") {
		t.Error("the build stage must end by running ./addon/compile-hamcp.sh /out/hamcp, the script the tests build with")
	}
	for _, st := range d.Stages {
		if ins := st.Find("ADD"); len(ins) > 0 {
			t.Errorf("line %d: use COPY, not ADD", ins[0].Line)
		}
	}
	// Nothing is installed or fetched in the final image, at build or at start.
	for _, in := range final.Find("RUN") {
		t.Errorf("line %d: the final stage runs %q; it should only copy the binary and run.sh", in.Line, in.Args)
	}
	script, err := os.ReadFile(filepath.Join(root(t), "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`\b(curl|wget|apk|git|go)\b`).Match(script) {
		t.Error("run.sh fetches or installs something at container start")
	}
	// PID 1 holds the container's environment (the Supervisor token): it must be hamcp, which
	// marks itself non-dumpable, not s6-overlay, whose environ any root command could read.
	if bytes.Contains(script, []byte("with-contenv")) || bytes.Contains(script, []byte("/run/s6")) {
		t.Error("run.sh runs under s6-overlay; hamcp must be PID 1 (exec from the ENTRYPOINT)")
	}
	if !regexp.MustCompile(`(?m)^exec /usr/bin/hamcp serve$`).Match(script) {
		t.Error("run.sh must exec /usr/bin/hamcp serve (the binary reads /data/options.json itself)")
	}
	copies := strings.Join(slices.Collect(func(yield func(string) bool) {
		for _, in := range final.Find("COPY") {
			if !yield(in.Args) {
				return
			}
		}
	}), "\n")
	for _, want := range []string{"--from=build /out/hamcp /usr/bin/hamcp", "run.sh /run.sh"} {
		if !strings.Contains(copies, want) {
			t.Errorf("the final stage does not COPY %s", want)
		}
	}
	entry := final.Find("ENTRYPOINT")
	if len(entry) != 1 {
		t.Fatalf("final stage has %d ENTRYPOINT, want 1 (in place of the base image's s6-overlay /init)", len(entry))
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry[0].Args), &argv); err != nil || !slices.Equal(argv, []string{"/run.sh"}) {
		t.Errorf("ENTRYPOINT %s, want the exec form [\"/run.sh\"] so hamcp becomes PID 1", entry[0].Args)
	}
	if cmds := final.Find("CMD"); len(cmds) != 1 || strings.TrimSpace(cmds[0].Args) != "[]" {
		t.Error(`final stage must reset the base image's CMD with CMD []`)
	}
	exposed := strings.Fields(strings.Join(func() []string {
		var out []string
		for _, in := range final.Find("EXPOSE") {
			out = append(out, in.Args)
		}
		return out
	}(), " "))
	var ports []string
	for p := range manifest(t).Ports {
		ports = append(ports, p)
	}
	slices.Sort(exposed)
	slices.Sort(ports)
	if !slices.Equal(exposed, ports) {
		t.Errorf("EXPOSE %v, want config.yaml's ports %v", exposed, ports)
	}
}

// TestDockerfileLabels: OCI and io.hass.* labels, agreeing with config.yaml (the new build actions
// no longer add io.hass.name/description/type/url).
func TestDockerfileLabels(t *testing.T) {
	t.Parallel()
	d := dockerfile(t)
	final := d.Stages[len(d.Stages)-1]
	labels, err := final.Labels()
	if err != nil {
		t.Fatal(err)
	}
	m := manifest(t)
	want := map[string]string{
		"io.hass.name": m.Name, "io.hass.description": m.Description, "io.hass.url": m.URL, "io.hass.type": "app",
		"io.hass.version": "${BUILD_VERSION}", "io.hass.arch": "${BUILD_ARCH}",
		"org.opencontainers.image.source": m.URL, "org.opencontainers.image.version": "${BUILD_VERSION}",
		"org.opencontainers.image.licenses": "MIT",
	}
	for k, v := range want {
		if labels[k] != v {
			t.Errorf("LABEL %s=%q, want %q", k, labels[k], v)
		}
	}
	for _, k := range []string{"org.opencontainers.image.title", "org.opencontainers.image.description"} {
		if labels[k] == "" {
			t.Errorf("LABEL %s is missing", k)
		}
	}
	// BUILD_VERSION defaults to config.yaml's version in both stages (the Supervisor passes it).
	for _, st := range d.Stages {
		for _, in := range st.Find("ARG") {
			if name, def, _ := strings.Cut(in.Args, "="); name == "BUILD_VERSION" && def != m.Version {
				t.Errorf("line %d: BUILD_VERSION defaults to %q, config.yaml's version is %q", in.Line, def, m.Version)
			}
		}
	}
}

// TestDockerfileHealthcheck: the Supervisor's watchdog follows Docker's health (the linter forbids
// watchdog:), so the image checks /mcp/health on the port hamcp listens on.
func TestDockerfileHealthcheck(t *testing.T) {
	t.Parallel()
	final := dockerfile(t).Stages[1]
	hc := final.Find("HEALTHCHECK")
	if len(hc) != 1 {
		t.Fatalf("final stage has %d HEALTHCHECK, want 1", len(hc))
	}
	listen := ""
	for _, o := range config.Options() {
		if o.Name == "listen" {
			listen = o.Default
		}
	}
	args := hc[0].Args
	for _, want := range []string{"--interval=", "--timeout=", "--start-period=", "CMD ", "http://127.0.0.1" + listen + "/mcp/health"} {
		if !strings.Contains(args, want) {
			t.Errorf("HEALTHCHECK %q lacks %q", args, want)
		}
	}
}

// TestStopGrace: on stop, hamcp (PID 1) lets calls finish for shutdown_grace; the Supervisor
// (config.yaml timeout) must wait longer than that before it kills the container, and no s6-overlay
// setting may remain to suggest another process supervises hamcp.
func TestStopGrace(t *testing.T) {
	t.Parallel()
	final := dockerfile(t).Stages[1]
	for _, in := range final.Find("ENV") {
		if strings.Contains(in.Args, "S6_") {
			t.Errorf("line %d: %s, but hamcp runs without s6-overlay", in.Line, in.Args)
		}
	}
	grace, err := time.ParseDuration(manifest(t).Options["shutdown_grace"].(string))
	if err != nil {
		t.Fatal(err)
	}
	timeout, _ := readYAML(t, "config.yaml")["timeout"].(float64)
	if time.Duration(timeout)*time.Second <= grace+2*time.Second {
		t.Errorf("config.yaml timeout %vs leaves shutdown_grace %v no margin", timeout, grace)
	}
}

// TestDockerignore: the context is the whole repository; only what the Dockerfile copies goes in.
func TestDockerignore(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root(t), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ig, err := parseDockerignore(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		sent bool
	}{
		{"go.mod", true}, {"go.sum", true}, {"run.sh", true}, {"addon/compile-hamcp.sh", true},
		{"src/cmd/hamcp/main.go", true}, {"src/app/app.go", true}, {"third_party/go-sdk/mcp/server.go", true},
		{"dev/sim/sandbox/templates/x.tmpl", false}, {"dev/demo/demo.go", false},
		{".git/config", false}, {"src/app/app_test.go", false}, {"src/oauth/testdata/x.json", false},
		{"README.md", false}, {".ci/node_modules/x/index.js", false}, {"icon.png", false},
	} {
		if got := !ig.excluded(tc.path); got != tc.sent {
			t.Errorf("%s sent to the build: %v, want %v", tc.path, got, tc.sent)
		}
	}
}

type ignoreRule struct {
	re     *regexp.Regexp
	negate bool
}

type dockerignore []ignoreRule

// parseDockerignore understands the patterns Docker does: *, ?, ** and ! exceptions, the last
// matching rule winning, a pattern also excluding everything below a matched directory.
func parseDockerignore(text string) (dockerignore, error) {
	var out dockerignore
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if p, ok := strings.CutPrefix(line, "!"); ok {
			r.negate, line = true, p
		}
		line = strings.TrimSuffix(strings.TrimPrefix(line, "/"), "/")
		var b strings.Builder
		b.WriteString("^")
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case strings.HasPrefix(line[i:], "**/"):
				b.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				b.WriteString(".*")
				i++
			case c == '*':
				b.WriteString("[^/]*")
			case c == '?':
				b.WriteString("[^/]")
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		b.WriteString("(/.*)?$")
		re, err := regexp.Compile(b.String())
		if err != nil {
			return nil, err
		}
		r.re = re
		out = append(out, r)
	}
	return out, nil
}

func (d dockerignore) excluded(path string) bool {
	ex := false
	for _, r := range d {
		if r.re.MatchString(path) {
			ex = !r.negate
		}
	}
	return ex
}
