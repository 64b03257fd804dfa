package rules

import (
	"context"
	"regexp"
)

// placeholder is %name%: a name without spaces, so "50% off at 10%" is left alone.
var placeholder = regexp.MustCompile(`%([A-Za-z_][A-Za-z0-9_.-]{0,63})%`)

// Formats of the time placeholders, in the hub's time zone.
const (
	placeholderTime = "15:04"
	placeholderDate = "2006-01-02"
	placeholderNow  = "2006-01-02 15:04:05"
)

// Expand replaces the %placeholders% of a text field (messages, notification and speech text,
// HTTP bodies, variable values, command parameters), in upstream's order:
//   - from the triggering event, when there is one: %device% (its display name), %value%,
//     %name% (the attribute), %time% and %date% (when it happened);
//   - %now% and %mode%;
//   - any other name: the rule's local variable, else the hub variable, else the rule-engine
//     variable (Env.Variable's order).
//
// A placeholder nothing answers, or one whose lookup fails, is left as written. The URL of an
// http_request is not expanded: where a request goes is what the user approved.
func Expand(ctx context.Context, env Env, r *Rule, rc Context, text string) string {
	if len(text) < 3 {
		return text
	}
	loc := zone(env)
	return placeholder.ReplaceAllStringFunc(text, func(tok string) string {
		name := tok[1 : len(tok)-1]
		if ev := rc.Event; ev != nil {
			when := ev.Date
			if when.IsZero() {
				when = rc.At
			}
			switch name {
			case "device":
				if ev.DisplayName != "" {
					return ev.DisplayName
				}
				if ev.DeviceID != "" {
					if d, err := env.Device(ctx, ev.DeviceID); err == nil {
						return d.DisplayName()
					}
				}
				return "Location"
			case "value":
				return ev.Value.String()
			case "name":
				return ev.Name
			case "time":
				return when.In(loc).Format(placeholderTime)
			case "date":
				return when.In(loc).Format(placeholderDate)
			}
		}
		switch name {
		case "now":
			return env.Now().In(loc).Format(placeholderNow)
		case "mode":
			if m, err := env.Mode(ctx); err == nil {
				return m
			}
			return tok
		}
		if v, ok, err := env.Variable(ctx, r, name); err == nil && ok {
			return v
		}
		return tok
	})
}
