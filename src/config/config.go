// Package config holds hamcp's one typed configuration. Every option can be set three ways,
// later ones winning: the add-on's /data/options.json, a HAMCP_* environment variable, and a
// command-line flag. A bad value stops start-up with a message that names the option, where it
// came from, and the accepted values.
package config

import (
	"time"
)

// Config is every option hamcp understands. The opt tag is the options.json key; the
// environment name is HAMCP_ + upper(opt) unless an env tag names others; the flag is
// --opt with dashes. A cmd tag limits the flag to those subcommands (serve, stdio, demo);
// without one it applies to all. The flag's type follows the field's (bool, int, duration, list).
type Config struct {
	Listen      string `opt:"listen" cmd:"serve,demo" default:":8099" help:"address the MCP HTTP server listens on (host:port)"`
	ExternalURL string `opt:"external_url" cmd:"serve,demo" help:"URL users reach hamcp at, e.g. https://mcp.example.com (used for OAuth issuer and resource)"`
	// IngressListen is where the add-on serves the hamcp panel to Home Assistant's ingress (config.yaml's
	// ingress_port); it is not published, and only the Supervisor's ingress proxy is answered there.
	IngressListen string `opt:"ingress_listen" cmd:"serve" default:":8098" help:"address the hamcp panel listens on for Home Assistant's ingress (add-on only; only the Supervisor's ingress proxy is answered)"`

	HAURL           string `opt:"ha_url" cmd:"serve,stdio" env:"HA_URL" help:"Home Assistant URL when running standalone, e.g. http://homeassistant.local:8123"`
	HAToken         string `opt:"ha_token" cmd:"serve,stdio" env:"HA_TOKEN" secret:"true" help:"Home Assistant long-lived access token when running standalone"`
	SupervisorURL   string `opt:"supervisor_url" cmd:"serve,stdio" default:"http://supervisor" help:"Supervisor API base URL (add-on)"`
	SupervisorToken string `opt:"supervisor_token" cmd:"serve,stdio" env:"SUPERVISOR_TOKEN" secret:"true" help:"Supervisor token, set by the Supervisor inside the add-on"`
	HAAuthURL       string `opt:"ha_auth_url" cmd:"serve" help:"HA URL used to validate users' long-lived tokens and exchange OAuth codes (default: ha_url, or in the add-on core's own address from the Supervisor: http(s)://homeassistant:<port>)"`

	HAExternalURL      string        `opt:"ha_external_url" cmd:"serve,demo" help:"Home Assistant URL users' browsers reach for the OAuth login (default: HA's own external_url)"`
	OAuthRedirectHosts []string      `opt:"oauth_redirect_hosts" cmd:"serve,demo" help:"hosts OAuth clients may redirect to (default: claude.ai, claude.com and loopback)"`
	OAuthGrantLifetime time.Duration `opt:"oauth_grant_lifetime" cmd:"serve,demo" default:"2160h" validate:"min=1h" help:"how long an OAuth sign-in lasts at most, however often the client refreshes; then the user signs in again"`
	// Client metadata documents come only from public addresses unless an administrator names the host here.
	OAuthCIMDPrivateHosts []string `opt:"oauth_cimd_private_hosts" cmd:"serve,demo" help:"host:port of your own MCP clients on the local network whose client metadata documents (https client ids) may be fetched from a private address; every other host stays refused"`
	OAuthCIMDCAFile       string   `opt:"oauth_cimd_ca_file" cmd:"serve,demo" help:"PEM file (e.g. /ssl/my-client-ca.pem) with the certificates, besides the system's, trusted for client metadata documents on oauth_cimd_private_hosts only"`

	DataDir  string `opt:"data_dir" cmd:"serve,stdio" default:"/data" help:"directory for hamcp's own state (store, SSH host key)"`
	LogLevel string `opt:"log_level" default:"info" validate:"oneof=debug info warning error" help:"log level"`

	Toolsets      []string `opt:"toolsets" help:"toolsets to enable (comma-separated); empty = all"`
	DisabledTools []string `opt:"disabled_tools" help:"tool names to hide (comma-separated)"`
	ReadOnly      bool     `opt:"read_only" help:"expose only tools that change nothing"`
	// Every call that changes something is in the audit log; reads would drown it, so they are opt-in.
	AuditReads bool `opt:"audit_reads" help:"also record calls that change nothing in the audit log (the panel's Activity page); calls that change something are always recorded"`
	// Long tool lists break clients (tool caps, token warnings); search mode offers a few tools and a search.
	ToolMode string `opt:"tool_mode" default:"auto" validate:"oneof=auto all search" help:"how tools are offered: all (every enabled tool listed), search (a few core tools plus hamcp_search_tools and hamcp_call_tool, which reach the other enabled tools), auto (all when the list fits 75 KB, else search)"`

	RateLimit      int           `opt:"rate_limit" cmd:"serve,demo" default:"100" validate:"min=0,max=100000" help:"requests per minute per client IP (0 disables)"`
	AllowedOrigins []string      `opt:"allowed_origins" cmd:"serve,demo" default:"https://claude.ai,https://claude.com" help:"browser Origins allowed to call /mcp (comma-separated; Claude's web app is allowed by default, set an empty list to refuse it); other Origins get 403"`
	TrustedProxies []string      `opt:"trusted_proxies" cmd:"serve,demo" help:"proxy IPs/CIDRs whose X-Forwarded-For is believed (the add-on's ingress is added automatically)"`
	MaxResponseKB  int           `opt:"max_response_kb" default:"2048" validate:"min=8,max=8192" help:"largest single tool result in KB: a safety net above the tools' own defaults (lists page at 100 items, files read 1 MB)"`
	BodyLimitKB    int           `opt:"body_limit_kb" cmd:"serve,demo" default:"4096" validate:"min=16,max=65536" help:"largest request body in KB"`
	ShutdownGrace  time.Duration `opt:"shutdown_grace" default:"10s" validate:"min=0" help:"time in-flight calls get to finish on SIGTERM"`

	PermissionFilesystem string        `opt:"permission_filesystem" default:"ask" validate:"oneof=ask allow deny" help:"policy for filesystem tools"`
	PermissionDatabase   string        `opt:"permission_database" default:"ask" validate:"oneof=ask allow deny" help:"policy for recorder database tools"`
	PermissionCommand    string        `opt:"permission_command" default:"ask" validate:"oneof=ask allow deny" help:"policy for shell command tools"`
	GrantTTL             time.Duration `opt:"grant_ttl" default:"8h" validate:"min=1m" help:"how long a permission grant lasts within a session"`
	FSBase               string        `opt:"fs_base" cmd:"serve,stdio" default:"/" help:"directory holding the add-on's mounted folders (homeassistant or config, ssl, backup, share, media, addons, addon_configs)"`
	RecorderDB           string        `opt:"recorder_db" help:"path of Home Assistant's recorder database (default: home-assistant_v2.db in the HA config folder)"`
	TrashRetention       time.Duration `opt:"trash_retention" default:"168h" validate:"min=1h" help:"how long deleted and overwritten files are kept for ha_restore_file"`

	// Writing SQL is its own category, so that allowing queries never allows changing the history.
	PermissionDatabaseWrite string `opt:"permission_database_write" default:"ask" validate:"oneof=ask allow deny" help:"policy for SQL that changes the recorder database (ha_write_sql; the database permission is needed too)"`

	// The Supervisor token is its own category, so that allowing commands never hands out the add-on's credential.
	PermissionSupervisorToken string   `opt:"permission_supervisor_token" default:"ask" validate:"oneof=ask allow deny" help:"policy for giving a command the Supervisor token (ha_execute_command supervisor_token=true; the command permission is needed too)"`
	CommandEnv                []string `opt:"command_env" help:"more environment variables commands inherit (comma-separated names) besides PATH, HOME, LANG, TZ, TERM; hamcp's tokens cannot be listed"`
	// confirm=true is the model's word; only these classes take it instead of the user's answer.
	ConfirmTrusted []string `opt:"confirm_trusted" default:"change" help:"kinds of action for which the assistant's confirm=true is enough (comma-separated: lock, alarm, garage, restart, delete, change); the others are confirmed by the user in their client, on the approval page or in the panel"`
	// Like Home Assistant's own MCP server: Assist's exposure list bounds what the assistant sees and does.
	ExposeScope       string   `opt:"expose_scope" default:"all" validate:"oneof=all assist" help:"which entities the Home Assistant tools see and act on: all, or assist (only the entities exposed to Assist under Settings → Voice assistants → Expose; entities without a setting count as not exposed)"`
	SensitiveEntities []string `opt:"sensitive_entities" help:"more entities whose every service call the user confirms like an unlock (comma-separated entity ids): a garage opener behind a switch, a gate behind a button. Switches and buttons on the device of a lock, alarm panel or garage door count without being listed"`

	SSHPort           int    `opt:"ssh_port" cmd:"serve,demo" default:"2222" validate:"min=0,max=65535" help:"SSH port for stdio-over-SSH (off unless keys are set)"`
	SSHAuthorizedKeys string `opt:"ssh_authorized_keys" cmd:"serve,demo" help:"OpenSSH public keys allowed to connect, one per line"`

	// A Hubitat Elevation hub beside Home Assistant: its tools exist only when hubitat_url is set.
	HubitatURL        string   `opt:"hubitat_url" cmd:"serve,stdio" help:"Hubitat hub's address, e.g. http://192.168.1.20 (empty: no Hubitat tools)"`
	HubitatAppID      string   `opt:"hubitat_app_id" cmd:"serve,stdio" help:"id of the hub's Maker API app, the number after /apps/api/ in its URLs"`
	HubitatToken      string   `opt:"hubitat_token" cmd:"serve,stdio" secret:"true" help:"the Maker API app's access token"`
	HubitatUsername   string   `opt:"hubitat_username" cmd:"serve,stdio" help:"Hub Security user name, when Hub Security is on (for hub info and the admin tools)"`
	HubitatPassword   string   `opt:"hubitat_password" cmd:"serve,stdio" secret:"true" help:"Hub Security password"`
	HubitatDevices    []string `opt:"hubitat_devices" cmd:"serve,stdio" help:"device ids the assistant may use (comma-separated), narrowing those the Maker API app authorises; empty = all of those"`
	HubitatRMEndpoint string   `opt:"hubitat_rm_endpoint" cmd:"serve,stdio" secret:"true" help:"the Local End Point URL of a Rule Machine rule you made for hamcp (its trigger's URL, with the access token), so the assistant can set rules' private booleans; empty: it cannot"`
	HubitatEvents     string   `opt:"hubitat_events" cmd:"serve,stdio" default:"auto" validate:"oneof=auto eventsocket posturl" help:"where live device events come from: eventsocket (the hub's WebSocket), posturl (Maker API pushes to external_url/hubitat/events), auto (eventsocket, falling back to posturl when external_url is set)"`
	// The upstream gates: off by default; admin write also needs confirm, a recent backup and the hub_admin grant.
	HubitatAdminRead  bool `opt:"hubitat_admin_read" cmd:"serve,stdio,demo" help:"allow the Hubitat hub admin read tools (hub health, apps and drivers, their source)"`
	HubitatAdminWrite bool `opt:"hubitat_admin_write" cmd:"serve,stdio,demo" help:"allow the Hubitat hub admin write tools (backup, reboot, install and delete code); each call also needs the hub_admin permission and a hub backup taken within the hour"`

	// sources records where each option's value came from, for error messages (load.go).
	sources map[string]string
}

// InAddon reports whether hamcp runs as a Home Assistant add-on (the Supervisor gave it a token).
func (c *Config) InAddon() bool { return c.SupervisorToken != "" }

// HABaseURL is where the Home Assistant API lives: through the Supervisor proxy in the add-on,
// HA_URL standalone.
func (c *Config) HABaseURL() string {
	if c.InAddon() && c.HAURL == "" {
		return c.SupervisorURL + "/core"
	}
	return c.HAURL
}

// HAAPIToken is the token hamcp itself uses to call Home Assistant.
func (c *Config) HAAPIToken() string {
	if c.InAddon() && c.HAToken == "" {
		return c.SupervisorToken
	}
	return c.HAToken
}

// TokenCheckURL is the Home Assistant URL user tokens are validated against. Inside the add-on
// the Supervisor proxy only accepts the add-on's own token, so users' tokens go to HA directly;
// there the app asks the Supervisor's /core/info for core's port and TLS setting, and this
// default (core's stock port) is only the fallback.
func (c *Config) TokenCheckURL() string {
	switch {
	case c.HAAuthURL != "":
		return c.HAAuthURL
	case c.InAddon() && c.HAURL == "":
		return "http://homeassistant:8123"
	}
	return c.HAURL
}
