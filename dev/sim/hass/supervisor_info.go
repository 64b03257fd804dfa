package hass

import (
	"net/url"
	"strconv"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

const (
	supervisorVersion = "2026.08.2"
	osVersion         = "16.1"
)

func (s *Supervisor) supervisorInfo(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	var addons []any
	for _, a := range s.addons {
		if a.installed {
			addons = append(addons, map[string]any{"name": a.name, "slug": a.slug, "version": a.version, "version_latest": a.versionLatest,
				"update_available": a.updateAvailable(), "state": a.state, "repository": a.repository, "icon": true})
		}
	}
	return ok(map[string]any{"version": supervisorVersion, "version_latest": supervisorVersion, "update_available": false, "channel": "stable",
		"arch": "amd64", "supported": true, "healthy": true, "ip_address": "172.30.32.2", "timezone": s.o.Home.Location().String(),
		"logging": "info", "debug": false, "debug_block": false, "diagnostics": false, "auto_update": true, "country": "NL",
		"detect_blocking_io": false, "addons": addons, "addons_repositories": []any{
			map[string]any{"name": "Home Assistant Community Add-ons", "source": "https://github.com/hassio-addons/repository"},
			map[string]any{"name": "ESPHome", "source": "https://github.com/esphome/home-assistant-addon"}}})
}

func (s *Supervisor) info(r *supReq) supResp {
	return ok(map[string]any{"supervisor": supervisorVersion, "homeassistant": home.Version, "hassos": osVersion, "docker": "27.2.0",
		"hostname": "homeassistant", "operating_system": "Home Assistant OS " + osVersion, "features": []string{"reboot", "shutdown", "services", "network", "hostname", "timedate", "os_agent", "haos", "resolved", "journal", "disk", "mount"},
		"machine": "generic-x86-64", "arch": "amd64", "state": "running", "supported_arch": []string{"amd64", "i386"}, "supported": true,
		"channel": "stable", "logging": "info", "timezone": s.o.Home.Location().String()})
}

// coreInfo is GET /core/info. port and ssl are core's own listener (api_port, api_ssl), from
// which add-ons build core's direct URL: here the simulated HA's real port, so that URL works.
func (s *Supervisor) coreInfo(r *supReq) supResp {
	s.mu.Lock()
	if u, err := url.Parse(s.o.HAURL()); err == nil && u.Port() != "" {
		s.corePort, _ = strconv.Atoi(u.Port())
	}
	port := s.corePort
	s.mu.Unlock()
	if port == 0 {
		port = 8123
	}
	return ok(map[string]any{"version": home.Version, "version_latest": home.Version, "update_available": false, "arch": "amd64",
		"machine": "generic-x86-64", "ip_address": "172.30.32.1", "image": "ghcr.io/home-assistant/generic-x86-64-homeassistant",
		"boot": true, "port": port, "ssl": false, "watchdog": true, "wait_boot": 600, "audio_input": nil, "audio_output": nil,
		"backups_exclude_database": false, "duplicate_log_file": false})
}

// coreCheck runs HA's config check; an invalid config is a 400 carrying the errors.
func (s *Supervisor) coreCheck(r *supReq) supResp {
	res := s.o.Home.CheckConfig()
	if res.Result != "valid" {
		msg := "Invalid configuration"
		if res.Errors != nil {
			msg = *res.Errors
		}
		return fail(400, msg)
	}
	return ok(nil)
}

func (s *Supervisor) coreRestart(r *supReq) supResp {
	s.o.Home.Log("warning", "homeassistant.core", "Home Assistant restart requested by the Supervisor")
	if s.o.OnCoreRestart != nil {
		s.o.OnCoreRestart()
	}
	return ok(nil)
}

func (s *Supervisor) hostInfo(r *supReq) supResp {
	boot := s.started.Add(-36 * time.Hour)
	return ok(map[string]any{"agent_version": "1.7.2", "apparmor_version": "3.1.7", "boot_timestamp": boot.UnixMicro(), "broadcast_llmnr": true,
		"broadcast_mdns": true, "chassis": "embedded", "virtualization": "", "cpe": "cpe:2.3:o:home-assistant:haos:" + osVersion + ":*:production:*:*:*:generic-x86-64:*",
		"deployment": "production", "disk_total": 58.0, "disk_used": 14.2, "disk_free": 43.8, "disk_life_time": nil,
		"features": []string{"reboot", "shutdown", "services", "network", "hostname", "timedate", "os_agent", "haos", "resolved", "journal", "disk", "mount"},
		"hostname": "homeassistant", "llmnr_hostname": "homeassistant", "kernel": "6.12.40-haos", "operating_system": "Home Assistant OS " + osVersion,
		"startup_time": 12.4, "timezone": s.o.Home.Location().String(), "dt_utc": home.ISOTime(s.o.Home.Now()), "dt_synchronized": true, "use_ntp": true})
}

func (s *Supervisor) osInfo(r *supReq) supResp {
	return ok(map[string]any{"version": osVersion, "version_latest": osVersion, "update_available": false, "board": "generic-x86-64",
		"boot": "A", "data_disk": "/dev/sda8", "boot_slots": map[string]any{
			"A": map[string]any{"state": "booted", "status": "good", "version": osVersion},
			"B": map[string]any{"state": "inactive", "status": nil, "version": "16.0"}}})
}

func (s *Supervisor) resolutionInfo(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	issues, suggestions := []any{}, []any{}
	for _, a := range s.addons {
		if a.updateAvailable() && a.slug == "a0d7b954_ssh" {
			issues = append(issues, map[string]any{"uuid": "4b7c8f1e2d3a4b5c6d7e8f9a0b1c2d3e", "type": "update_rollback", "context": "addon", "reference": a.slug, "reference_extra": nil})
		}
	}
	if len(s.backups) == 0 {
		issues = append(issues, map[string]any{"uuid": "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b", "type": "no_current_backup", "context": "system", "reference": nil, "reference_extra": nil})
		suggestions = append(suggestions, map[string]any{"uuid": "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d", "type": "create_full_backup", "context": "system", "reference": nil, "reference_extra": nil, "auto": false})
	}
	return ok(map[string]any{"unsupported": []any{}, "unhealthy": []any{}, "issues": issues, "suggestions": suggestions,
		"checks": []any{map[string]any{"slug": "free_space", "enabled": true}, map[string]any{"slug": "backups", "enabled": true},
			map[string]any{"slug": "core_security", "enabled": true}, map[string]any{"slug": "supervisor_trust", "enabled": true}}})
}
