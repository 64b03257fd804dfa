// Package hubitattools is the Hubitat toolset: the tools of the Hubitat MCP Rule Server, named
// hubitat_<upstream name>, over hamcp's Hubitat client. Tools call the hubitat client and
// hamcp's store and nothing else; they exist only when a hub is configured.
package hubitattools

import (
	"errors"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Deps are what the Hubitat tools need.
type Deps struct {
	Hub   *hubitat.Client
	Store *hubstore.Store // debug log, captured states, rule variables, the last hub backup taken through hamcp
	// AdminRead and AdminWrite are the hubitat_admin_read and hubitat_admin_write options: the
	// upstream gates, off by default. Admin write tools are also in the hub_admin category.
	AdminRead, AdminWrite bool
	// Version is hamcp's own version; Supervisor (nil outside the add-on) knows the latest one.
	Version    string
	Supervisor *supervisor.Client
	// Now is the clock (time.Now when nil); tests move it to age a backup.
	Now func() time.Time
	// Rules is the rule engine the rule tools drive (nil: they answer that it is not running).
	Rules *rules.Engine
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Tools returns every Hubitat tool, one group per file, listed here explicitly.
func Tools(d Deps) []*toolkit.Tool {
	var out []*toolkit.Tool
	for _, group := range []func(Deps) []*toolkit.Tool{
		deviceTools, systemTools,
		capturedTools, debugTools, adminReadTools, adminWriteTools, ruleTools, installedAppTools, hubCareTools, deviceAdminTools,
		// other groups are added here by the file that defines them
	} {
		out = append(out, group(d)...)
	}
	return out
}

// hubError is the one place a Hubitat client error becomes an error the model can act on.
// changed says whether the failed call may already have taken effect.
func hubError(err error, changed bool, next string) error {
	var api *hubitat.APIError
	switch {
	case errors.Is(err, hubitat.ErrDeviceNotFound):
		return toolkit.NotFound("Device not found", "hubitat_list_devices lists the devices hamcp may use; never substitute a similarly named one")
	case errors.Is(err, hubitat.ErrUnavailable):
		return toolkit.Unavailable("Hubitat hub", err, "the hub may be rebooting or offline: wait a minute and try again; /mcp/health shows the connection")
	case errors.Is(err, hubitat.ErrUnauthorized), errors.Is(err, hubitat.ErrNoLogin):
		return &toolkit.Error{Code: "backend_unauthorized", Message: err.Error(),
			Hint: "the hamcp administrator must fix the Hubitat token or Hub Security login in the add-on options", Changed: &changed}
	case errors.As(err, &api):
		return toolkit.Backend("Hubitat hub", err, changed, next)
	}
	return toolkit.Backend("Hubitat hub", err, changed, next)
}
