package hubitattools

import (
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
)

// HubAdmin is the permission category of the admin write tools: the user grants it per session,
// like hamcp's own categories, and every call is then confirmed by the user on top of it.
const HubAdmin toolkit.Category = "hub_admin"

// HubAdminCategory is what the user reads when asked for HubAdmin.
var HubAdminCategory = permission.CategoryInfo{
	Category: permission.Category(HubAdmin),
	Warning: "Equivalent to giving the assistant the Hubitat hub's administrator login. Hub administration lets " +
		"the assistant change the Hubitat hub itself: create, change and delete rules, apps and drivers (code " +
		"that runs on the hub), and reboot the hub or restore its backups. Each such call still needs your own " +
		"confirmation and a recent hub backup.",
}

// The category exists wherever the tools that need it can be declared; registration is complete
// before any permission manager is built.
func init() { permission.RegisterCategory(HubAdminCategory) }
