package hass

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// addon is one add-on in the store, installed or not.
type addon struct {
	slug, name, description, repository, url, versionLatest, version string
	installed                                                        bool
	state                                                            string // started | stopped | unknown
	boot                                                             string
	ingress, hassioAPI, homeassistantAPI, advanced                   bool
	hassioRole, stage                                                string
	options                                                          map[string]any
	logs                                                             []string
	ip                                                               string
}

// catalog is the demo store: a few installed, a few available.
func catalog(selfSlug string) []*addon {
	return []*addon{
		{slug: selfSlug, name: "hamcp", description: "MCP server that lets AI assistants run your home", repository: "local", url: "https://github.com/hamcp/hamcp",
			version: "1.0.0", versionLatest: "1.0.0", installed: true, state: "started", boot: "auto", ingress: true, hassioAPI: true, homeassistantAPI: true,
			hassioRole: "manager", stage: "stable", options: map[string]any{"log_level": "info", "permissions": map[string]any{"filesystem": "ask", "database": "ask", "command": "ask"}}, ip: "172.30.33.5"},
		{slug: "core_mosquitto", name: "Mosquitto broker", description: "An Open Source MQTT broker", repository: "core", url: "https://github.com/home-assistant/addons/tree/master/mosquitto",
			version: "6.4.1", versionLatest: "6.5.0", installed: true, state: "started", boot: "auto", hassioAPI: true, homeassistantAPI: false, hassioRole: "default", stage: "stable",
			options: map[string]any{"logins": []any{}, "require_certificate": false, "certfile": "fullchain.pem", "keyfile": "privkey.pem", "customize": map[string]any{"active": false, "folder": "mosquitto"}}, ip: "172.30.33.1"},
		{slug: "core_configurator", name: "File editor", description: "Simple browser-based file editor for Home Assistant", repository: "core", url: "https://github.com/home-assistant/addons/tree/master/configurator",
			version: "5.8.0", versionLatest: "5.8.0", installed: true, state: "stopped", boot: "manual", ingress: true, hassioAPI: true, homeassistantAPI: true, hassioRole: "default", stage: "stable",
			options: map[string]any{"dirsfirst": false, "enforce_basepath": true, "git": true, "ignore_pattern": []any{"__pycache__", ".cloud", ".storage", "deps"}, "ssh_keys": []any{}}, ip: "172.30.33.2"},
		{slug: "a0d7b954_ssh", name: "Advanced SSH & Web Terminal", description: "SSH & Web Terminal access to your Home Assistant instance", repository: "a0d7b954", url: "https://github.com/hassio-addons/addon-ssh",
			version: "19.0.0", versionLatest: "20.0.1", installed: true, state: "started", boot: "auto", ingress: true, hassioAPI: true, homeassistantAPI: true, hassioRole: "manager", advanced: true, stage: "stable",
			options: map[string]any{"ssh": map[string]any{"username": "hassio", "password": "", "authorized_keys": []any{}, "sftp": false}, "zsh": true}, ip: "172.30.33.3"},
		{slug: "core_samba", name: "Samba share", description: "Expose Home Assistant folders with SMB/CIFS", repository: "core", url: "https://github.com/home-assistant/addons/tree/master/samba",
			versionLatest: "12.5.1", boot: "auto", hassioAPI: true, hassioRole: "default", stage: "stable", options: map[string]any{"workgroup": "WORKGROUP", "username": "homeassistant", "password": ""}},
		{slug: "a0d7b954_vscode", name: "Studio Code Server", description: "Fully featured Visual Studio Code (VSCode) experience", repository: "a0d7b954", url: "https://github.com/hassio-addons/addon-vscode",
			versionLatest: "5.19.0", boot: "auto", ingress: true, hassioAPI: true, homeassistantAPI: true, hassioRole: "manager", stage: "stable", options: map[string]any{"packages": []any{}, "init_commands": []any{}}},
		{slug: "5c53de3b_esphome", name: "ESPHome Device Builder", description: "Build and manage ESPHome devices", repository: "5c53de3b", url: "https://esphome.io",
			versionLatest: "2026.8.0", boot: "auto", ingress: true, hassioAPI: true, hassioRole: "default", stage: "stable", options: map[string]any{}},
	}
}

func (a *addon) updateAvailable() bool { return a.installed && a.version != a.versionLatest }

func (a *addon) versionOrNil() any {
	if !a.installed {
		return nil
	}
	return a.version
}

func (a *addon) stateOrUnknown() string {
	if !a.installed {
		return "unknown"
	}
	return a.state
}

// summary is the /addons (and /store/addons) list item.
func (a *addon) summary() map[string]any {
	return map[string]any{
		"name": a.name, "slug": a.slug, "description": a.description, "advanced": a.advanced, "stage": a.stage,
		"version": a.versionOrNil(), "version_latest": a.versionLatest, "update_available": a.updateAvailable(),
		"available": true, "detached": false, "homeassistant": nil, "state": a.stateOrUnknown(), "repository": a.repository,
		"build": a.repository == "local", "url": a.url, "icon": true, "logo": true, "system_managed": false, "installed": a.installed,
	}
}

// info is /addons/<slug>/info.
func (a *addon) info(selfSlug string) map[string]any {
	m := a.summary()
	host := strings.ReplaceAll(a.slug, "_", "-")
	var ingressEntry, ingressURL, webui any
	if a.ingress {
		ingressEntry = "/api/hassio_ingress/" + ingressToken(a.slug)
		ingressURL = ingressEntry.(string) + "/"
	}
	for k, v := range map[string]any{
		"hostname": host, "dns": []string{host + ".local.hass.io"}, "long_description": "# " + a.name + "\n\n" + a.description + ".\n",
		"protected": true, "rating": 6, "boot": a.boot, "boot_config": "auto", "options": a.options, "schema": []any{},
		"arch": []string{"aarch64", "amd64", "armv7"}, "machine": []string{}, "network": map[string]any{}, "network_description": map[string]any{},
		"host_network": false, "host_pid": false, "host_ipc": false, "host_uts": false, "host_dbus": false, "privileged": []string{},
		"full_access": false, "apparmor": "default", "changelog": true, "documentation": true, "stdin": false,
		"hassio_api": a.hassioAPI, "hassio_role": a.hassioRole, "auth_api": false, "homeassistant_api": a.homeassistantAPI,
		"gpio": false, "usb": false, "uart": false, "kernel_modules": false, "devicetree": false, "udev": false, "docker_api": false,
		"video": false, "audio": false, "startup": "application", "services": []string{}, "discovery": []string{}, "translations": map[string]any{},
		"ingress": a.ingress, "signed": a.repository != "local", "webui": webui, "ingress_entry": ingressEntry, "ingress_url": ingressURL,
		"ingress_port": 8099, "ingress_panel": a.ingress, "audio_input": nil, "audio_output": nil, "auto_update": false,
		"ip_address": a.ip, "watchdog": a.installed, "devices": []string{}, "system_managed_config_entry": nil,
	} {
		m[k] = v
	}
	if !a.installed {
		m["ip_address"] = "0.0.0.0"
	}
	return m
}

// ingressToken is stable per add-on and shaped like the Supervisor's
// (43 URL-safe base64 characters).
func ingressToken(slug string) string {
	sum := sha256.Sum256([]byte("ingress:" + slug))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// logLine appends an s6-style line to the add-on's log.
func (a *addon) logLine(now time.Time, level, msg string) {
	a.logs = append(a.logs, fmt.Sprintf("[%s] %s: %s", now.Format("15:04:05"), level, msg))
	if len(a.logs) > 2000 {
		a.logs = a.logs[len(a.logs)-2000:]
	}
}

func (a *addon) bootLogs(now time.Time) {
	a.logs = append(a.logs, "s6-rc: info: service s6rc-oneshot-runner: starting",
		"s6-rc: info: service s6rc-oneshot-runner successfully started",
		"s6-rc: info: service legacy-services: starting")
	a.logLine(now, "INFO", "Starting "+a.name+" "+a.version+"...")
	a.logLine(now, "INFO", a.name+" is up and running")
}
