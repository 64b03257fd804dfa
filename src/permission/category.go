// Package permission decides whether a session may use a privileged category of tools (filesystem,
// database, command, and the categories integrations register, such as Hubitat's hub administration): policies from the add-on options, per-session grants, pending
// requests the user answers out of the model's reach (the prompt in their MCP client, hamcp's approval
// page behind a Home Assistant administrator login, the panel), and the audit trail. It knows nothing
// about MCP or HTTP; the toolkit calls Authorize before every privileged tool runs.
package permission

import (
	"fmt"
	"slices"
	"strings"
)

// Category is a group of tools the user grants together.
type Category string

const (
	Filesystem Category = "filesystem"
	Database   Category = "database"
	Command    Category = "command"
	// SupervisorToken lets a command run with the add-on's Supervisor token (ha_execute_command with
	// supervisor_token=true), on top of the command grant.
	SupervisorToken Category = "supervisor_token"
	// DatabaseWrite lets SQL change the recorder database (ha_write_sql), on top of the database
	// grant, so that approving queries never approves writes.
	DatabaseWrite Category = "database_write"
)

// AllCategories lists every category in display order: hamcp's own, then those integrations
// registered (RegisterCategory).
var AllCategories = []Category{Filesystem, Database, DatabaseWrite, Command, SupervisorToken}

// CategoryInfo is a category an integration brings (Hubitat's hub_admin): its name and the warning
// that says, in words a user can judge, what granting it allows (shown wherever the user is asked).
type CategoryInfo struct {
	Category Category
	Warning  string
}

// RegisterCategory adds an integration's category. Call it from the integration package's init:
// the category list is read without locks, so it must be complete before anything runs. A name
// already known, an odd name or an empty warning is a programming error and panics.
func RegisterCategory(info CategoryInfo) {
	c := info.Category
	switch {
	case c != Category(strings.ToLower(strings.TrimSpace(string(c)))) || c == "":
		panic(fmt.Sprintf("permission: category %q must be a lower-case name", c))
	case c.valid():
		panic(fmt.Sprintf("permission: category %q is registered twice", c))
	case strings.TrimSpace(info.Warning) == "":
		panic(fmt.Sprintf("permission: category %q needs a warning saying what it allows", c))
	}
	AllCategories = append(AllCategories, c)
	defaultWarnings[c] = info.Warning
}

// ParseCategory accepts a category name in any case, with surrounding spaces.
func ParseCategory(s string) (Category, error) {
	c := Category(strings.ToLower(strings.TrimSpace(s)))
	if c.valid() {
		return c, nil
	}
	names := make([]string, len(AllCategories))
	for i, c := range AllCategories {
		names[i] = string(c)
	}
	return "", fmt.Errorf("unknown permission category %q: use one of %s", s, strings.Join(names, ", "))
}

func (c Category) valid() bool { return slices.Contains(AllCategories, c) }

// Policy is what the add-on options say to do with a category.
type Policy string

const (
	PolicyAsk   Policy = "ask"   // the user decides per session (the default)
	PolicyAllow Policy = "allow" // every session may, without asking
	PolicyDeny  Policy = "deny"  // no session may, whatever the user says in chat
)

// ParsePolicy accepts a policy name in any case, with surrounding spaces.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(strings.ToLower(strings.TrimSpace(s)))
	switch p {
	case PolicyAsk, PolicyAllow, PolicyDeny:
		return p, nil
	case "":
		return "", fmt.Errorf("permission policy is empty: use ask (the default), allow or deny")
	}
	return "", fmt.Errorf("unknown permission policy %q: use ask, allow or deny", s)
}

// optionName is the add-on option and environment variable that set a category's policy, so refusals can
// tell the user exactly what to change.
func optionName(c Category) string {
	return fmt.Sprintf("permission_%s (HAMCP_PERMISSION_%s)", c, strings.ToUpper(string(c)))
}

// defaultWarnings say what a grant really allows, in words a user can judge. They are shown in the
// elicitation prompt, the approval page, the notification, the panel and every refusal. A grant that
// runs code or reads secrets says first that it equals handing over an administrator account, because
// it does: the files and the shell both hold what logs in as one.
var defaultWarnings = map[Category]string{
	Filesystem: "Equivalent to giving the assistant your administrator account. Filesystem access lets the " +
		"assistant read, create, overwrite, move and delete files in Home Assistant's folders (/config, " +
		"/homeassistant, /ssl, /backup, /share, /media, /addons, /addon_configs), including /config/.storage/auth " +
		"(Home Assistant's login tokens and password hashes, enough to act as any user), secrets.yaml, " +
		"certificates, backups and Home Assistant's logs. Writing there can change what Home Assistant runs " +
		"(custom_components, automations with shell commands), so treat it like command access. Overwritten and " +
		"deleted files are kept in a trash for recovery; hamcp's own data folder and system folders (/etc, /usr, " +
		"/bin, /sbin, /sys, /proc) stay off limits.",
	Database: "Database access lets the assistant read Home Assistant's recorder database with SQL: all " +
		"recorded history (states, events, statistics — which can show when people are home). Changing the " +
		"database is asked for separately.",
	DatabaseWrite: "Database write access lets the assistant change and delete rows and tables of Home " +
		"Assistant's recorder database with SQL (on top of database access). Home Assistant does not expect " +
		"anyone else to write there: history can be lost or linked wrongly until it restarts, and deleted rows " +
		"cannot come back.",
	Command: "Equivalent to giving the assistant your administrator account. Command access lets the assistant " +
		"run any shell command inside the hamcp add-on as root, each with a time limit (30 seconds by default, at " +
		"most 10 minutes), and run code through Home Assistant: install, start, stop and update add-ons and HACS " +
		"downloads, and call services such as shell_command, python_script and hassio. A command can read or " +
		"change anything in the add-on's folders, including hamcp's own options and tokens (/data/options.json), " +
		"its SSH host key and Home Assistant's login tokens (/config/.storage/auth), and reach your network. The " +
		"Supervisor token is put in its environment only if you also allow that separately.",
	SupervisorToken: "Equivalent to giving the assistant your administrator account. Passing the Supervisor " +
		"token lets a command the assistant runs act as the hamcp add-on " +
		"towards the Home Assistant Supervisor and, through it, Home Assistant: install, start and remove add-ons, " +
		"make and restore backups, restart or update Home Assistant and the host, and read every add-on's " +
		"configuration, including passwords. It is asked for separately from command access.",
}
