package rules

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// Journal is what a dry run would have done, one human-readable line per write, in order.
type Journal struct {
	mu    sync.Mutex
	lines []string
}

// Lines returns a copy of the lines so far.
func (j *Journal) Lines() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.lines...)
}

func (j *Journal) add(format string, args ...any) {
	j.mu.Lock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
	j.mu.Unlock()
}

// rehearsal marks a dry-run Env: Run notes its delays and goes on instead of suspending.
type rehearsal interface{ journal() *Journal }

// DryRunEnv wraps env for a dry run (test_rule): reads go to env; every write — commands, mode,
// HSM, variables, captures, cancelled delays, notifications, HTTP requests, log lines — is
// written to the Journal as a line ("would send on() to Kitchen Light (12)") and never reaches
// env. Run on it does not suspend at a delay: it notes the wait and goes on, so the journal
// lists everything the rule would do.
//
// Writes are remembered for the dry run's own later reads (a set_mode then an if on the mode,
// a variable_math then an if on the variable); device attributes are not simulated.
//
// Every method is written out rather than embedding env, so that a method added to Env later
// is a compile error here instead of a write that slips through to the hub.
func DryRunEnv(env Env) (Env, *Journal) {
	j := &Journal{}
	return &dryEnv{env: env, j: j, vars: map[string]string{}}, j
}

type dryEnv struct {
	env Env
	j   *Journal

	mu   sync.Mutex
	mode *string
	hsm  *string
	vars map[string]string // "local:x", "hub:x", "rule:x"
}

var _ rehearsal = (*dryEnv)(nil)

func (d *dryEnv) journal() *Journal { return d.j }

// Reads.

func (d *dryEnv) Now() time.Time           { return d.env.Now() }
func (d *dryEnv) Location() *time.Location { return d.env.Location() }
func (d *dryEnv) Sun(day time.Time) (time.Time, time.Time, error) {
	return d.env.Sun(day)
}
func (d *dryEnv) Device(ctx context.Context, id string) (hubitat.Device, error) {
	return d.env.Device(ctx, id)
}
func (d *dryEnv) DeviceEvents(ctx context.Context, id string, limit int) ([]hubitat.Event, error) {
	return d.env.DeviceEvents(ctx, id, limit)
}

func (d *dryEnv) Mode(ctx context.Context) (string, error) {
	d.mu.Lock()
	m := d.mode
	d.mu.Unlock()
	if m != nil {
		return *m, nil
	}
	return d.env.Mode(ctx)
}

func (d *dryEnv) HSM(ctx context.Context) (string, error) {
	d.mu.Lock()
	h := d.hsm
	d.mu.Unlock()
	if h != nil {
		return *h, nil
	}
	return d.env.HSM(ctx)
}

// Variable answers from the dry run's own writes first (local, hub, rule-engine, the Env's
// lookup order; noLocals skips the local ones), then from env.
func (d *dryEnv) Variable(ctx context.Context, rule *Rule, name string) (string, bool, error) {
	d.mu.Lock()
	scopes := []string{"hub:", "rule:"}
	if rule != nil && rule != noLocals {
		scopes = append([]string{"local:"}, scopes...)
	}
	for _, s := range scopes {
		if v, ok := d.vars[s+name]; ok {
			d.mu.Unlock()
			return v, true, nil
		}
	}
	d.mu.Unlock()
	return d.env.Variable(ctx, rule, name)
}

// written is a variable the dry run set ("local:x", "hub:x", "rule:x").
func (d *dryEnv) written(key string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.vars[key]
	return v, ok
}

// Writes: journal lines only.

func (d *dryEnv) SendCommand(ctx context.Context, id, command string, args ...string) error {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = showArg(a)
	}
	d.j.add("would send %s(%s) to %s", command, strings.Join(shown, ", "), d.name(ctx, id))
	return nil
}

func (d *dryEnv) SetMode(ctx context.Context, name string) error {
	d.mu.Lock()
	d.mode = &name
	d.mu.Unlock()
	d.j.add("would set the mode to %q", name)
	return nil
}

func (d *dryEnv) SetHSM(ctx context.Context, value string) error {
	// The status HSM reports after the command (armAway → armedAway), for later hsm_status reads.
	status := map[string]string{"armAway": "armedAway", "armHome": "armedHome", "armNight": "armedNight", "disarm": "disarmed"}[value]
	if status == "" {
		status = value
	}
	d.mu.Lock()
	d.hsm = &status
	d.mu.Unlock()
	d.j.add("would set HSM to %s", value)
	return nil
}

func (d *dryEnv) setVar(scope, what, name, value string) {
	d.mu.Lock()
	d.vars[scope+name] = value
	d.mu.Unlock()
	d.j.add("would set %s %q to %q", what, name, value)
}

func (d *dryEnv) SetRuleVariable(ctx context.Context, name, value string) error {
	d.setVar("rule:", "rule variable", name, value)
	return nil
}

func (d *dryEnv) SetHubVariable(ctx context.Context, name, value string) error {
	d.setVar("hub:", "hub variable", name, value)
	return nil
}

func (d *dryEnv) SetLocalVariable(ctx context.Context, rule *Rule, name, value string) error {
	d.setVar("local:", "local variable", name, value)
	return nil
}

func (d *dryEnv) CaptureState(ctx context.Context, stateID string, deviceIDs []string) error {
	names := make([]string, len(deviceIDs))
	for i, id := range deviceIDs {
		names[i] = d.name(ctx, id)
	}
	d.j.add("would capture the state of %s as %q", strings.Join(names, ", "), stateID)
	return nil
}

func (d *dryEnv) RestoreState(ctx context.Context, stateID string) error {
	d.j.add("would restore the captured state %q", stateID)
	return nil
}

func (d *dryEnv) CancelDelayed(ctx context.Context, rule *Rule, delayID string) error {
	if delayID == "all" {
		d.j.add("would cancel all of the rule's pending delays")
	} else {
		d.j.add("would cancel the pending delay %q", delayID)
	}
	return nil
}

func (d *dryEnv) Notify(ctx context.Context, deviceID, message string) error {
	d.j.add("would send the notification %q to %s", message, d.name(ctx, deviceID))
	return nil
}

// HTTPRequest answers status 0: not sent, and not a failure.
// A password in the URL is shown as xxxxx.
func (d *dryEnv) HTTPRequest(ctx context.Context, method, rawURL, contentType, body string) (int, error) {
	shown := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		shown = u.Redacted()
	}
	if body != "" {
		d.j.add("would send %s %s (%d bytes of %s)", method, shown, len(body), cmpOr(contentType, "text"))
	} else {
		d.j.add("would send %s %s", method, shown)
	}
	return 0, nil
}

func (d *dryEnv) Log(ctx context.Context, rule *Rule, level, message string) {
	d.j.add("would log (%s) %q", level, message)
}

// name is "Kitchen Light (12)", or "device 12" when the device cannot be read.
func (d *dryEnv) name(ctx context.Context, id string) string {
	dev, err := d.env.Device(ctx, id)
	if err != nil {
		return "device " + id
	}
	return deviceName(dev, id)
}

// showArg writes a command argument: numbers and COLOR_MAPs as they are, text quoted.
func showArg(a string) string {
	if _, err := strconv.ParseFloat(a, 64); err == nil || strings.HasPrefix(a, "{") {
		return a
	}
	return strconv.Quote(a)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
