// Package hatools is the Home Assistant toolset: one file per group of tools, each tool's
// declaration next to its handler. Tools call the homeassistant client and nothing else.
package hatools

import (
	"errors"
	"net/http"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Toolset names.
const (
	SetStates = "states"
)

// Deps are what the Home Assistant tools need.
type Deps struct {
	HA         *homeassistant.Client
	Supervisor *supervisor.Client // nil outside the add-on
	Files      *fsguard.FS        // the configuration-file tools share the filesystem tools' confinement
	Recorder   Recorder           // nil without a recorder file: ha_get_history then reads through HA only
	// SensitiveEntities are entities the user marked as sensitive (the sensitive_entities option): any
	// service on them is confirmed, like an unlock.
	SensitiveEntities []string
	// History keeps what an assistant's configuration changes replace (versions.go,
	// ha_config_history). nil keeps nothing: only in tests that do not look.
	History *confighistory.Store
	// Scope is expose_scope=assist (scope.go); nil sees every entity.
	Scope *Scope
}

// Tools returns every Home Assistant tool. The list is explicit, one group per file, so what
// hamcp offers is read here and not assembled by init order.
func Tools(d Deps) []*toolkit.Tool {
	var out []*toolkit.Tool
	for _, group := range []func(Deps) []*toolkit.Tool{
		stateTools, historyTools, logbookTools, searchTools, eventTools,
		automationTools, blueprintTools, helperTools, organisationTools, peopleTools,
		calendarTools, mediaTools, notificationTools, conversationTools, energyTools,
		configFileTools, systemTools, addonTools, supervisorTools,
		scriptTools, sceneTools, dashboardTools, inputHelperTools, calendarEventTools, registryTools,
		integrationTools, backupTools, updateTools, traceTools, serviceListTools, versionTools,
	} {
		out = append(out, group(d)...)
	}
	if d.Scope != nil {
		for _, t := range out {
			d.Scope.guard(d, t)
		}
	}
	return out
}

// haError turns a client error into one the model can act on. changed says whether the failed
// call may already have taken effect.
func haError(err error, changed bool, next string) error {
	var api *homeassistant.APIError
	switch {
	case errors.Is(err, homeassistant.ErrNoAnswer) && !changed:
		// The request reached HA, or may have: whether it took effect is unknown (Changed unset).
		e := toolkit.Unavailable("Home Assistant", err, "the request reached Home Assistant, which did not answer: if the call changes something it may have taken effect, so read the state before repeating it")
		e.Changed = nil
		return e
	case errors.Is(err, homeassistant.ErrUnavailable):
		return toolkit.Unavailable("Home Assistant", err, "check that Home Assistant is running, then try again; /mcp/health shows the connection")
	case errors.Is(err, homeassistant.ErrUnauthorized):
		return &toolkit.Error{Code: "backend_unauthorized", Message: "Home Assistant refused hamcp's access token", Hint: "the hamcp administrator must fix the token in the add-on options (HA_TOKEN)", Changed: &changed}
	case errors.As(err, &api) && api.Status == http.StatusNotFound:
		return toolkit.NotFound("Home Assistant has no such object: "+api.Message, next)
	case errors.As(err, &api):
		return toolkit.Backend("Home Assistant", err, changed, next)
	}
	return toolkit.Backend("Home Assistant", err, changed, next)
}
