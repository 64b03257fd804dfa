package rules

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// ConditionResult is what one of a rule's conditions said now (test_rule shows them).
type ConditionResult struct {
	Index       int    `json:"index"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Met         bool   `json:"met"`
	Detail      string `json:"detail,omitempty"` // what was read, e.g. `switch of Lamp (12) is "on"`
	Error       string `json:"error,omitempty"`  // why it could not be evaluated (counted as not met)
}

// EvaluateAll evaluates the rule's conditions with its conditionLogic: all (the default) or
// any. No conditions is true. Every condition is evaluated, even after the answer is known, so
// that test_rule can show each one; an error counts as not met (fail closed).
func EvaluateAll(ctx context.Context, env Env, r *Rule, rc Context) (bool, []ConditionResult) {
	results := make([]ConditionResult, 0, len(r.Conditions))
	met := 0
	for i, c := range r.Conditions {
		ok, detail, err := evaluate(ctx, env, r, c, rc)
		res := ConditionResult{Index: i, Type: c.Type, Description: DescribeCondition(c), Met: ok && err == nil, Detail: detail}
		if err != nil {
			res.Error = err.Error()
		}
		if res.Met {
			met++
		}
		results = append(results, res)
	}
	if len(r.Conditions) == 0 {
		return true, results
	}
	switch strings.ToLower(r.ConditionLogic) {
	case "", "all":
		return met == len(r.Conditions), results
	case "any":
		return met > 0, results
	default:
		results = append(results, ConditionResult{Index: -1, Type: "conditionLogic",
			Error: fmt.Sprintf("conditionLogic %q is neither all nor any; the rule does not run", r.ConditionLogic)})
		return false, results
	}
}

// Evaluate says whether one condition holds now. An unknown type, a missing field, a device
// that cannot be read or a value that cannot be compared is false with the reason as the error
// (fail closed: a rule never acts on a state it could not read).
func Evaluate(ctx context.Context, env Env, r *Rule, c Condition, rc Context) (bool, error) {
	ok, _, err := evaluate(ctx, env, r, c, rc)
	if err != nil {
		return false, err
	}
	return ok, nil
}

// evaluate is Evaluate plus a line saying what was read.
func evaluate(ctx context.Context, env Env, r *Rule, c Condition, rc Context) (bool, string, error) {
	if err := ctx.Err(); err != nil {
		return false, "", err
	}
	switch c.Type {
	case "device_state":
		return attributeIs(ctx, env, c.DeviceID, c.Attribute, c.Operator, c.Value)
	case "illuminance":
		return attributeIs(ctx, env, c.DeviceID, "illuminance", c.Operator, c.Value)
	case "power":
		return attributeIs(ctx, env, c.DeviceID, "power", c.Operator, c.Value)
	case "presence":
		return attributeIs(ctx, env, c.DeviceID, "presence", "equals", required(c.Status))
	case "lock":
		return attributeIs(ctx, env, c.DeviceID, "lock", "equals", required(c.Status))
	case "thermostat_mode":
		return attributeIs(ctx, env, c.DeviceID, "thermostatMode", "equals", required(c.Mode))
	case "thermostat_state":
		return attributeIs(ctx, env, c.DeviceID, "thermostatOperatingState", "equals", required(c.State))
	case "device_was":
		return deviceWas(ctx, env, c)
	case "time_range":
		return timeRange(env, c)
	case "mode":
		return modeIs(ctx, env, c)
	case "variable":
		return variableIs(ctx, env, r, c)
	case "days_of_week":
		return dayIs(env, c)
	case "sun_position":
		return sunIs(env, c)
	case "hsm_status":
		if c.Status == "" {
			return false, "", errors.New("status is required (disarmed, armedAway, armedHome, armedNight, …)")
		}
		hsm, err := env.HSM(ctx)
		if err != nil {
			return false, "", fmt.Errorf("reading HSM: %w", err)
		}
		return strings.EqualFold(hsm, c.Status), fmt.Sprintf("HSM is %q", hsm), nil
	case "":
		return false, "", errors.New("the condition has no type")
	default:
		return false, "", fmt.Errorf("unknown condition type %q", c.Type)
	}
}

// required turns an enum field into the value to compare with; empty stays nil (an error).
func required(s string) *Scalar {
	if s == "" {
		return nil
	}
	return S(s)
}

// attributeIs compares one attribute of one device with want.
func attributeIs(ctx context.Context, env Env, id, attr, op string, want *Scalar) (bool, string, error) {
	switch {
	case id == "":
		return false, "", errors.New("deviceId is required")
	case attr == "":
		return false, "", errors.New("attribute is required")
	case want == nil:
		return false, "", errors.New("value is required")
	}
	d, err := env.Device(ctx, id)
	if err != nil {
		return false, "", fmt.Errorf("reading device %s: %w", id, err)
	}
	a, ok := d.Attribute(attr)
	if !ok {
		return false, "", fmt.Errorf("%s has no attribute %q", deviceName(d, id), attr)
	}
	got := a.Value.String()
	detail := fmt.Sprintf("%s of %s is %q", attr, deviceName(d, id), got)
	if a.Value.IsNull() {
		return false, detail, fmt.Errorf("%s of %s has no value yet", attr, deviceName(d, id))
	}
	ok, err = Compare(op, got, want.Text)
	return ok, detail, err
}

// deviceName is how journal lines and errors name a device: "Kitchen Light (12)".
func deviceName(d hubitat.Device, id string) string {
	if n := d.DisplayName(); n != "" {
		return fmt.Sprintf("%s (%s)", n, id)
	}
	return "device " + id
}

// Compare applies a rule operator to a value read (got) and the rule's value (want), the way
// upstream does with one fix. Two numbers compare as numbers ("72.0" equals 72); otherwise
// equals/not_equals compare the text. The ordering operators compare two numbers, or two texts
// lexicographically ("08:30" < "09:00"); a number against a text (an "unknown" temperature
// against 70) is an error, so the condition fails closed instead of upstream's fallback to
// string equality.
func Compare(op, got, want string) (bool, error) {
	gf, gNum := number(got)
	wf, wNum := number(want)
	var c int
	switch {
	case gNum && wNum:
		c = cmp.Compare(gf, wf)
	default:
		c = strings.Compare(strings.TrimSpace(got), strings.TrimSpace(want))
	}
	switch op {
	case "", "equals", "==", "=":
		return c == 0, nil
	case "not_equals", "!=", "<>":
		return c != 0, nil
	case ">", "<", ">=", "<=":
		if gNum != wNum {
			return false, fmt.Errorf("cannot compare %q %s %q: one is a number and the other is not", got, op, want)
		}
	default:
		return false, fmt.Errorf("unknown operator %q (use equals, not_equals, >, <, >=, <=)", op)
	}
	switch op {
	case ">":
		return c > 0, nil
	case "<":
		return c < 0, nil
	case ">=":
		return c >= 0, nil
	default:
		return c <= 0, nil
	}
}

// number reads a finite number; NaN and infinities are not readings.
func number(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// maxWasEvents is how far back device_was looks (upstream: 100 events).
const maxWasEvents = 100

// deviceWas: the attribute equals value now and has not been anything else for forSeconds.
// Unlike upstream (which only looks for a different value inside the window), a state entered
// inside the window does not count as held: the newest event at or before the window's start
// must carry the value too, or, when the history does not go back that far, the oldest event in
// the window must not be a state change into it.
func deviceWas(ctx context.Context, env Env, c Condition) (bool, string, error) {
	if c.ForSeconds <= 0 {
		return false, "", errors.New("forSeconds is required (1–7200)")
	}
	ok, detail, err := attributeIs(ctx, env, c.DeviceID, c.Attribute, "equals", c.Value)
	if err != nil || !ok {
		return false, detail, err
	}
	events, err := env.DeviceEvents(ctx, c.DeviceID, maxWasEvents)
	if err != nil {
		return false, detail, fmt.Errorf("reading the events of device %s: %w", c.DeviceID, err)
	}
	events = slices.DeleteFunc(slices.Clone(events), func(e hubitat.Event) bool {
		return e.Name != c.Attribute || e.Date.IsZero()
	})
	slices.SortStableFunc(events, func(a, b hubitat.Event) int { return b.Date.Compare(a.Date) }) // newest first
	since := env.Now().Add(-time.Duration(c.ForSeconds) * time.Second)
	detail = fmt.Sprintf("%s; wanted %q for %d s", detail, c.Value.Text, c.ForSeconds)
	var oldestInWindow *hubitat.Event
	for i, e := range events {
		same, _ := Compare("equals", e.Value.String(), c.Value.Text)
		if e.Date.After(since) {
			if !same {
				return false, fmt.Sprintf("%s; it was %q at %s", detail, e.Value.String(), e.Date.In(zone(env)).Format(time.TimeOnly)), nil
			}
			oldestInWindow = &events[i]
			continue
		}
		if !same {
			return false, fmt.Sprintf("%s; it became %q less than %d s ago", detail, c.Value.Text, c.ForSeconds), nil
		}
		return true, detail, nil
	}
	if oldestInWindow != nil && oldestInWindow.IsStateChange != nil && *oldestInWindow.IsStateChange {
		return false, fmt.Sprintf("%s; it became %q less than %d s ago", detail, c.Value.Text, c.ForSeconds), nil
	}
	return true, detail, nil
}

// zone is the hub's time zone; UTC when the Env does not know it (time.In(nil) panics).
func zone(env Env) *time.Location {
	if loc := env.Location(); loc != nil {
		return loc
	}
	return time.UTC
}

// timeRange: now lies in [start, end); a range whose start is after its end spans midnight.
func timeRange(env Env, c Condition) (bool, string, error) {
	if c.Start == "" || c.End == "" {
		return false, "", errors.New("start and end are required (HH:mm, sunrise or sunset with an optional offset such as sunset-30)")
	}
	now := env.Now().In(zone(env))
	start, err := timeOfDay(env, c.Start, now)
	if err != nil {
		return false, "", fmt.Errorf("start: %w", err)
	}
	end, err := timeOfDay(env, c.End, now)
	if err != nil {
		return false, "", fmt.Errorf("end: %w", err)
	}
	detail := fmt.Sprintf("now %s; range %s–%s", now.Format("15:04"), start.Format("15:04"), end.Format("15:04"))
	if !start.After(end) {
		return !now.Before(start) && now.Before(end), detail, nil
	}
	return !now.Before(start) || now.Before(end), detail, nil
}

// timeOfDay places a bound ("07:30", "sunrise", "sunset-30", "sunrise+15") on now's day.
func timeOfDay(env Env, s string, now time.Time) (time.Time, error) {
	kind, offset, hm, err := ParseTimeBound(s)
	if err != nil {
		return time.Time{}, err
	}
	if kind == "" {
		return time.Date(now.Year(), now.Month(), now.Day(), hm/60, hm%60, 0, 0, now.Location()), nil
	}
	rise, set, err := env.Sun(now)
	if err != nil {
		return time.Time{}, fmt.Errorf("sun times: %w", err)
	}
	t := rise
	if kind == "sunset" {
		t = set
	}
	return t.In(now.Location()).Add(time.Duration(offset) * time.Minute), nil
}

// ParseTimeBound reads a time_range bound: "HH:mm" (kind "", minutes of the day in hm), or
// "sunrise"/"sunset" with an optional signed offset in minutes ("sunset-30", "sunrise+15").
func ParseTimeBound(s string) (kind string, offset, hm int, err error) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	for _, k := range []string{"sunrise", "sunset"} {
		rest, ok := strings.CutPrefix(t, k)
		if !ok {
			continue
		}
		if rest == "" {
			return k, 0, 0, nil
		}
		if rest[0] != '+' && rest[0] != '-' {
			break
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < -180 || n > 180 {
			return "", 0, 0, fmt.Errorf("%q: the offset after %s must be minutes from -180 to +180", s, k)
		}
		return k, n, 0, nil
	}
	hh, mm, ok := strings.Cut(t, ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if !ok || err1 != nil || err2 != nil || !digits(hh, 1, 2) || !digits(mm, 2, 2) || h > 23 || m > 59 {
		return "", 0, 0, fmt.Errorf("%q is not a time: use HH:mm (24-hour), sunrise or sunset, with an optional offset such as sunset-30", s)
	}
	return "", 0, h*60 + m, nil
}

// digits: s is lo to hi ASCII digits (no sign, no space).
func digits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// modeIs: the hub's mode is (operator in, the default) or is not (not_in) one of mode/modes.
func modeIs(ctx context.Context, env Env, c Condition) (bool, string, error) {
	modes := c.Modes
	if c.Mode != "" {
		modes = append([]string{c.Mode}, modes...)
	}
	if len(modes) == 0 {
		return false, "", errors.New("mode or modes is required")
	}
	var in bool
	switch c.Operator {
	case "", "in", "equals", "==":
		in = true
	case "not_in", "not_equals", "!=":
	default:
		return false, "", fmt.Errorf("unknown operator %q for mode (use in or not_in)", c.Operator)
	}
	mode, err := env.Mode(ctx)
	if err != nil {
		return false, "", fmt.Errorf("reading the mode: %w", err)
	}
	found := slices.ContainsFunc(modes, func(m string) bool { return strings.EqualFold(m, mode) })
	return found == in, fmt.Sprintf("mode is %q", mode), nil
}

// variableIs compares a variable (local, then hub, then the rule-engine store) with value.
func variableIs(ctx context.Context, env Env, r *Rule, c Condition) (bool, string, error) {
	if c.VariableName == "" {
		return false, "", errors.New("variableName is required")
	}
	if c.Value == nil {
		return false, "", errors.New("value is required")
	}
	v, ok, err := env.Variable(ctx, r, c.VariableName)
	if err != nil {
		return false, "", fmt.Errorf("reading variable %q: %w", c.VariableName, err)
	}
	if !ok {
		return false, "", fmt.Errorf("variable %q is not set (not a local, hub or rule variable)", c.VariableName)
	}
	ok, err = Compare(c.Operator, v, c.Value.Text)
	return ok, fmt.Sprintf("variable %q is %q", c.VariableName, v), err
}

// dayIs: today (in the hub's time zone) is one of days.
func dayIs(env Env, c Condition) (bool, string, error) {
	if len(c.Days) == 0 {
		return false, "", errors.New("days is required (Sunday … Saturday)")
	}
	today := env.Now().In(zone(env)).Weekday().String()
	return slices.ContainsFunc(c.Days, func(d string) bool { return strings.EqualFold(strings.TrimSpace(d), today) }),
		"today is " + today, nil
}

// sunIs: the sun is up between today's sunrise and sunset.
func sunIs(env Env, c Condition) (bool, string, error) {
	var up bool
	switch strings.ToLower(c.Position) {
	case "up":
		up = true
	case "down":
	default:
		return false, "", fmt.Errorf("position %q: use up or down", c.Position)
	}
	now := env.Now().In(zone(env))
	rise, set, err := env.Sun(now)
	if err != nil {
		return false, "", fmt.Errorf("sun times: %w", err)
	}
	isUp := !now.Before(rise) && now.Before(set)
	state := map[bool]string{true: "up", false: "down"}[isUp]
	return isUp == up, fmt.Sprintf("the sun is %s (sunrise %s, sunset %s)", state,
		rise.In(now.Location()).Format("15:04"), set.In(now.Location()).Format("15:04")), nil
}

// DescribeCondition says what a condition tests, in words.
func DescribeCondition(c Condition) string {
	dev := "device " + c.DeviceID
	switch c.Type {
	case "device_state":
		return fmt.Sprintf("%s %s %s %q", dev, c.Attribute, opWord(c.Operator), c.Value.String())
	case "device_was":
		return fmt.Sprintf("%s %s has been %q for %d s", dev, c.Attribute, c.Value.String(), c.ForSeconds)
	case "time_range":
		return fmt.Sprintf("the time is between %s and %s", c.Start, c.End)
	case "mode":
		modes := c.Modes
		if c.Mode != "" {
			modes = append([]string{c.Mode}, modes...)
		}
		not := ""
		if c.Operator == "not_in" || c.Operator == "not_equals" || c.Operator == "!=" {
			not = "not "
		}
		return fmt.Sprintf("the mode is %sone of %s", not, strings.Join(modes, ", "))
	case "variable":
		return fmt.Sprintf("variable %q %s %q", c.VariableName, opWord(c.Operator), c.Value.String())
	case "days_of_week":
		return "the day is one of " + strings.Join(c.Days, ", ")
	case "sun_position":
		return "the sun is " + c.Position
	case "hsm_status":
		return "HSM is " + c.Status
	case "presence", "lock":
		return fmt.Sprintf("%s is %s", dev, c.Status)
	case "thermostat_mode":
		return fmt.Sprintf("thermostat %s mode is %s", c.DeviceID, c.Mode)
	case "thermostat_state":
		return fmt.Sprintf("thermostat %s is %s", c.DeviceID, c.State)
	case "illuminance":
		return fmt.Sprintf("%s illuminance %s %s lux", dev, opWord(c.Operator), c.Value.String())
	case "power":
		return fmt.Sprintf("%s power %s %s W", dev, opWord(c.Operator), c.Value.String())
	default:
		return fmt.Sprintf("unknown condition type %q", c.Type)
	}
}

func opWord(op string) string {
	switch op {
	case "", "equals", "==", "=":
		return "equals"
	case "not_equals", "!=", "<>":
		return "does not equal"
	default:
		return op
	}
}
