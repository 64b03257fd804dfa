// Package privileged is the one list of Home Assistant services that run code or change the system
// rather than a device, and so need the user's command permission however they are reached
// (ha_call_service, an automation the model writes). It knows no MCP, HTTP or backend: only names.
package privileged

import (
	"strings"

	"github.com/hamcp/hamcp/src/sensitive"
)

// Why each rule is there; shown in DOCS.md and in the permission prompt's argument summary.
const (
	whyCode    = "runs code"
	whySystem  = "changes the system"
	whyHistory = "deletes or stops recorded history"
	whyNetwork = "reaches other systems with Home Assistant's network position and stored credentials"
)

// Rule is one entry: a whole domain (Service "*") or one service.
type Rule struct {
	Domain  string
	Service string // "*" = every service of the domain
	Why     string
}

// Rules are the services that need the command permission. Device control (lights, locks, covers,
// scripts and automations the user wrote) stays open: the user set those up to be used, and the risky
// ones still ask for confirm.
var Rules = []Rule{
	// The Supervisor: add-ons (start, stop, stdin), backups and restores, host reboot and shutdown.
	{"hassio", "*", whyCode},
	{"shell_command", "*", whyCode},
	{"python_script", "*", whyCode},
	{"pyscript", "*", whyCode},
	// HACS installs third-party integrations, which run inside Home Assistant.
	{"hacs", "*", whyCode},
	// Installs new versions of Home Assistant, the OS, add-ons and HACS repositories.
	{"update", "install", whyCode},
	// Restarting or stopping Home Assistant and purging history are not here: they run no code and read
	// no secret, so the user confirms each one (package sensitive, classes restart and delete) instead
	// of handing over a root-equivalent grant for them.
	{"recorder", "disable", whyHistory},
	// Opens or closes Home Assistant Cloud's remote access to the instance.
	{"cloud", "remote_connect", whySystem},
	{"cloud", "remote_disconnect", whySystem},
	// rest_command calls take templated URLs and payloads: a way into the local network and to services
	// whose credentials the user put in the configuration.
	{"rest_command", "*", whyNetwork},
}

// Service returns the rule a service falls under, if any. Names are compared as Home Assistant does
// (lower case).
func Service(domain, service string) (Rule, bool) {
	domain, service = strings.ToLower(strings.TrimSpace(domain)), strings.ToLower(strings.TrimSpace(service))
	for _, r := range Rules {
		if r.Domain == domain && (r.Service == "*" || r.Service == service) {
			return r, true
		}
	}
	return Rule{}, false
}

// Name returns the rule that a "domain.service" string falls under. A name Home Assistant will render
// as a template (it contains {{ or {%) is treated as privileged: what it becomes is unknown until it runs.
func Name(name string) (Rule, bool) {
	if sensitive.IsTemplate(name) {
		return Rule{Domain: name, Service: "*", Why: "is a template, so the service it calls is unknown until it runs"}, true
	}
	domain, service, ok := strings.Cut(name, ".")
	if !ok {
		return Rule{}, false
	}
	return Service(domain, service)
}

// InConfig walks an automation or script configuration (decoded JSON or YAML) and returns the
// privileged services its actions call, found as package sensitive finds every action (under
// "action", "service" or "service_template", at any depth: choose, if/then, sequence, parallel, repeat).
func InConfig(v any) []string {
	var out []string
	for _, c := range sensitive.Calls(v) {
		if _, bad := Name(c.Service); bad {
			out = append(out, c.Service)
		}
	}
	return out
}

// String is how a rule reads in DOCS.md: "shell_command.*", "homeassistant.restart".
func (r Rule) String() string { return r.Domain + "." + r.Service }
