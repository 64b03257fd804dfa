package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
)

// CoreInfo is GET /core/info (Home Assistant Core as the Supervisor runs it).
type CoreInfo struct {
	Version                string          `json:"version"`
	VersionLatest          string          `json:"version_latest"`
	UpdateAvailable        bool            `json:"update_available"`
	Arch                   string          `json:"arch"`
	Machine                string          `json:"machine"`
	IPAddress              string          `json:"ip_address"`
	Image                  string          `json:"image"`
	Boot                   bool            `json:"boot"`
	Port                   int             `json:"port"`
	SSL                    bool            `json:"ssl"`
	Watchdog               bool            `json:"watchdog"`
	WaitBoot               int             `json:"wait_boot"`
	AudioInput             *string         `json:"audio_input"`
	AudioOutput            *string         `json:"audio_output"`
	BackupsExcludeDatabase bool            `json:"backups_exclude_database"`
	Raw                    json.RawMessage `json:"-"`
}

// HostInfo is GET /host/info.
type HostInfo struct {
	Hostname        string          `json:"hostname"`
	OperatingSystem string          `json:"operating_system"`
	Kernel          string          `json:"kernel"`
	Chassis         string          `json:"chassis"`
	Deployment      string          `json:"deployment"`
	Virtualization  string          `json:"virtualization"`
	Features        []string        `json:"features"`
	DiskTotal       float64         `json:"disk_total"` // GB
	DiskUsed        float64         `json:"disk_used"`
	DiskFree        float64         `json:"disk_free"`
	DiskLifeTime    *float64        `json:"disk_life_time"`
	Timezone        string          `json:"timezone"`
	DTUTC           string          `json:"dt_utc"`
	DTSynchronized  bool            `json:"dt_synchronized"`
	UseNTP          bool            `json:"use_ntp"`
	BootTimestamp   int64           `json:"boot_timestamp"`
	StartupTime     float64         `json:"startup_time"`
	AgentVersion    string          `json:"agent_version"`
	Raw             json.RawMessage `json:"-"`
}

// OSInfo is GET /os/info (Home Assistant OS only).
type OSInfo struct {
	Version         string                `json:"version"`
	VersionLatest   string                `json:"version_latest"`
	UpdateAvailable bool                  `json:"update_available"`
	Board           string                `json:"board"`
	Boot            string                `json:"boot"`
	DataDisk        string                `json:"data_disk"`
	BootSlots       map[string]OSBootSlot `json:"boot_slots"`
	Raw             json.RawMessage       `json:"-"`
}

// OSBootSlot is one A/B slot of the OS.
type OSBootSlot struct {
	State   string `json:"state"`
	Status  string `json:"status"`
	Version string `json:"version"`
}

// SupervisorInfo is GET /supervisor/info.
type SupervisorInfo struct {
	Version         string          `json:"version"`
	VersionLatest   string          `json:"version_latest"`
	UpdateAvailable bool            `json:"update_available"`
	Channel         string          `json:"channel"`
	Arch            string          `json:"arch"`
	Supported       bool            `json:"supported"`
	Healthy         bool            `json:"healthy"`
	IPAddress       string          `json:"ip_address"`
	Timezone        string          `json:"timezone"`
	Logging         string          `json:"logging"`
	Debug           bool            `json:"debug"`
	AutoUpdate      bool            `json:"auto_update"`
	Raw             json.RawMessage `json:"-"`
}

// ResolutionInfo is GET /resolution/info: what the Supervisor thinks is wrong and what it
// suggests.
type ResolutionInfo struct {
	Unsupported []string          `json:"unsupported"`
	Unhealthy   []string          `json:"unhealthy"`
	Issues      []ResolutionItem  `json:"issues"`
	Suggestions []ResolutionItem  `json:"suggestions"`
	Checks      []ResolutionCheck `json:"checks"`
}

// ResolutionItem is an issue or a suggestion.
type ResolutionItem struct {
	UUID           string         `json:"uuid"`
	Type           string         `json:"type"`
	Context        string         `json:"context"`
	Reference      *string        `json:"reference"`
	ReferenceExtra map[string]any `json:"reference_extra,omitempty"`
	Auto           *bool          `json:"auto,omitempty"`
}

// ResolutionCheck is one of the Supervisor's periodic checks.
type ResolutionCheck struct {
	Slug    string `json:"slug"`
	Enabled bool   `json:"enabled"`
}

// CoreInfo describes Home Assistant Core.
func (c *Client) CoreInfo(ctx context.Context) (CoreInfo, error) {
	return getInfo[CoreInfo](ctx, c, "/core/info", func(v *CoreInfo, raw json.RawMessage) { v.Raw = raw })
}

// CoreHost is the name core answers to on the add-ons' network.
const CoreHost = "homeassistant"

// CoreURL is core's own address, built as the Supervisor builds it for itself
// (homeassistant/module.py, from api_ssl and api_port): https when core serves TLS, on core's
// port, at host (CoreHost inside an add-on). Users' tokens must be checked there: through the
// Supervisor's /core/api proxy core sees the Supervisor's user, not theirs.
func (c *Client) CoreURL(ctx context.Context, host string) (string, error) {
	info, err := c.CoreInfo(ctx)
	if err != nil {
		return "", err
	}
	if info.Port <= 0 || info.Port > 65535 {
		return "", fmt.Errorf("supervisor: /core/info gives no usable port (%d)", info.Port)
	}
	scheme := "http"
	if info.SSL {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(info.Port)), nil
}

// CoreCheck validates HA's configuration; an invalid configuration is an *APIError whose
// message carries the Supervisor's report.
func (c *Client) CoreCheck(ctx context.Context) error {
	return c.Do(ctx, http.MethodPost, "/core/check", nil, nil)
}

// CoreRestart restarts Home Assistant Core, optionally into safe mode. It blocks until the
// Supervisor reports the restart done; HA's own API is down meanwhile.
func (c *Client) CoreRestart(ctx context.Context, safeMode bool) error {
	return c.Do(ctx, http.MethodPost, "/core/restart", map[string]any{"safe_mode": safeMode}, nil)
}

// HostInfo describes the host machine.
func (c *Client) HostInfo(ctx context.Context) (HostInfo, error) {
	return getInfo[HostInfo](ctx, c, "/host/info", func(v *HostInfo, raw json.RawMessage) { v.Raw = raw })
}

// OSInfo describes Home Assistant OS (an *APIError on installs without it).
func (c *Client) OSInfo(ctx context.Context) (OSInfo, error) {
	return getInfo[OSInfo](ctx, c, "/os/info", func(v *OSInfo, raw json.RawMessage) { v.Raw = raw })
}

// SupervisorInfo describes the Supervisor itself.
func (c *Client) SupervisorInfo(ctx context.Context) (SupervisorInfo, error) {
	return getInfo[SupervisorInfo](ctx, c, "/supervisor/info", func(v *SupervisorInfo, raw json.RawMessage) { v.Raw = raw })
}

// ResolutionInfo lists the Supervisor's issues, suggestions and checks.
func (c *Client) ResolutionInfo(ctx context.Context) (ResolutionInfo, error) {
	var out ResolutionInfo
	err := c.Do(ctx, http.MethodGet, "/resolution/info", nil, &out)
	return out, err
}
