package hatools

import (
	"strings"

	"github.com/hamcp/hamcp/src/privileged"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The permissions that only some calls of a tool need, decided from the arguments before the handler
// runs (toolkit.Condition). Confirmations are separate (toolkit.Confirm, confirm.go): a grant is the
// user allowing a category for the session, a confirmation the user allowing one sensitive call.

// Add-ons run code with the rights their manifest asks for (up to full host access); starting,
// stopping and updating them changes what runs on the machine.
var addonGrant = &toolkit.Condition[manageAddonsArgs]{
	Category: toolkit.Command, When: "action install, uninstall, start, stop, restart or update",
	Applies: func(a manageAddonsArgs) bool { return a.Action != "list" && a.Action != "info" },
}

// HACS downloads third-party code from GitHub that Home Assistant then runs.
var hacsGrant = &toolkit.Condition[manageHACSArgs]{
	Category: toolkit.Command, When: "action download or remove",
	Applies: func(a manageHACSArgs) bool { return a.Action == "download" || a.Action == "remove" },
}

// serviceGrant covers the services in privileged.Rules.
var serviceGrant = &toolkit.Condition[callServiceArgs]{
	Category: toolkit.Command, When: "the service runs code or changes the system: " + ruleList(),
	Applies: func(a callServiceArgs) bool {
		_, ok := privileged.Service(a.Domain, a.Service)
		return ok
	},
}

// An automation that calls a privileged service would run it later without any grant (and at once
// through automation.trigger), so writing one needs the same permission as calling the service.
var createAutomationGrant = &toolkit.Condition[createAutomationArgs]{
	Category: toolkit.Command, When: "its actions call a service of the ha_call_service list (or a templated service name)",
	Applies: func(a createAutomationArgs) bool { return callsPrivileged(a.automationConfigArgs) },
}

var updateAutomationGrant = &toolkit.Condition[updateAutomationArgs]{
	Category: toolkit.Command, When: createAutomationGrant.When,
	Applies: func(a updateAutomationArgs) bool { return callsPrivileged(a.automationConfigArgs) },
}

// callsPrivileged reports whether the automation given calls a privileged service. A configuration
// that does not parse is refused by the handler with the parse error, so it needs no grant.
func callsPrivileged(a automationConfigArgs) bool {
	cfg, err := a.parse()
	if err != nil {
		return false
	}
	return len(privileged.InConfig(cfg)) > 0
}

func ruleList() string {
	names := make([]string, len(privileged.Rules))
	for i, r := range privileged.Rules {
		names[i] = "`" + r.String() + "`"
	}
	return strings.Join(names, ", ")
}
