package home

import (
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// Update entities (components/update) of the demo home: the Supervisor's (Core, Supervisor, OS,
// an add-on), HACS's for a dashboard card, and an ESPHome device's firmware. update.install
// marks the entity in progress, then installs; a Core update restarts Home Assistant. The state
// is "on" while a newer version than the installed one is offered and not skipped.

// UpdateEntityFeature bits (components/update/const.py).
const (
	updInstall         = 1
	updSpecificVersion = 2
	updProgress        = 4
	updBackup          = 8
	updReleaseNotes    = 16
)

type updateSpec struct {
	entityID, name, platform, uniqueID, title string
	installed, latest, releaseURL, notes      string
	features                                  int
	autoUpdate                                bool
	deviceClass                               string
	hacsID                                    string // the HACS repository an install downloads
	restarts                                  bool   // installing restarts Home Assistant
	device                                    *devSpec
}

var demoUpdates = []updateSpec{
	{entityID: "update.home_assistant_core_update", name: "Home Assistant Core Update", platform: "hassio", uniqueID: "home_assistant_core_version_latest",
		title: "Home Assistant Core", installed: Version, latest: "2026.8.2", releaseURL: "https://www.home-assistant.io/latest-release-notes/",
		features: updInstall | updSpecificVersion | updBackup, restarts: true},
	{entityID: "update.home_assistant_supervisor_update", name: "Home Assistant Supervisor Update", platform: "hassio", uniqueID: "home_assistant_supervisor_version_latest",
		title: "Home Assistant Supervisor", installed: "2026.08.2", latest: "2026.08.2", releaseURL: "https://github.com/home-assistant/supervisor/releases/tag/2026.08.2",
		features: updInstall, autoUpdate: true},
	{entityID: "update.home_assistant_operating_system_update", name: "Home Assistant Operating System Update", platform: "hassio", uniqueID: "home_assistant_os_version_latest",
		title: "Home Assistant Operating System", installed: "16.1", latest: "16.1", releaseURL: "https://github.com/home-assistant/operating-system/releases/tag/16.1",
		features: updInstall | updSpecificVersion},
	{entityID: "update.mosquitto_broker_update", name: "Mosquitto broker Update", platform: "hassio", uniqueID: "core_mosquitto_version_latest",
		title: "Mosquitto broker", installed: "6.4.1", latest: "6.5.0", features: updInstall | updBackup | updReleaseNotes,
		notes: "# 6.5.0\n\n- Update Mosquitto to 2.0.22\n- Allow TLS 1.3 only listeners\n\n# 6.4.2\n\n- Fix a crash when the password file is empty\n"},
	{entityID: "update.mushroom_update", name: "Mushroom update", platform: "hacs", uniqueID: "444350375", hacsID: "444350375",
		title: "Mushroom", installed: "v4.4.0", latest: "v4.5.0", releaseURL: "https://github.com/piitaya/lovelace-mushroom/releases/v4.5.0",
		features: updInstall | updSpecificVersion | updProgress | updReleaseNotes,
		notes:    "## What's Changed\n\n* Add a media control card feature for volume buttons\n* Fix the chip card's alignment in sections\n\n**Full Changelog**: https://github.com/piitaya/lovelace-mushroom/compare/v4.4.0...v4.5.0"},
	{entityID: "update.office_presence_firmware", name: "Office Presence Firmware", platform: "esphome", title: "ESPHome",
		installed: "2026.6.4", latest: "2026.7.3", releaseURL: "https://esphome.io/changelog/2026.7.0.html", features: updInstall, deviceClass: "firmware",
		device: &devSpec{key: "office_presence", name: "Office Presence", manufacturer: "Espressif", model: "ESP32-C3 mmWave presence sensor", modelID: "esp32-c3-devkitm-1", area: "office", integration: "esphome"}},
}

func updateSpecOf(entityID string) *updateSpec {
	for i := range demoUpdates {
		if demoUpdates[i].entityID == entityID {
			return &demoUpdates[i]
		}
	}
	return nil
}

// buildUpdates adds the update entities. Their ids come from their own seeded source, so the
// rest of the demo (registry ids, contexts) stays what it was before they existed.
func (h *Home) buildUpdates() {
	rng := rand.New(rand.NewSource(21))
	hex := func() string {
		const digits = "0123456789abcdef"
		b := make([]byte, 32)
		for i := range b {
			b[i] = digits[rng.Intn(16)]
		}
		return string(b)
	}
	ts := h.createdAt()
	for _, u := range demoUpdates {
		e := &EntityEntry{ID: hex(), EntityID: u.entityID, UniqueID: u.uniqueID, Platform: u.platform, OriginalName: strp(u.name),
			EntityCategory: strp("config"), Labels: []string{}, Aliases: []string{}, CreatedAt: ts, ModifiedAt: ts}
		if u.device != nil {
			entry := hex()[:26]
			h.configEntries[entry] = &ConfigEntry{EntryID: entry, Domain: u.device.integration, Title: u.device.name, State: "loaded"}
			dev := &Device{ID: hex(), Name: u.device.name, ConfigEntries: []string{entry}, ConfigEntryID: strp(entry),
				ConfigEntriesSubentries: map[string][]*string{entry: {nil}}, PrimaryConfigEntry: strp(entry),
				Connections: [][2]string{{"mac", "7c:df:a1:3e:52:08"}}, Identifiers: [][2]string{{u.device.integration, "7cdfa13e5208"}},
				Labels: []string{}, AreaID: strp(u.device.area), Manufacturer: strp(u.device.manufacturer), Model: strp(u.device.model),
				ModelID: strp(u.device.modelID), SWVersion: strp(u.installed + " (ESPHome " + u.installed + ")"), CreatedAt: ts, ModifiedAt: ts}
			h.devices[dev.ID] = dev
			e.DeviceID, e.ConfigEntryID = strp(dev.ID), strp(entry)
			e.UniqueID = "7cdfa13e5208-firmware"
		}
		if u.deviceClass != "" {
			e.OriginalDeviceClass = strp(u.deviceClass)
		}
		h.entities[u.entityID] = e
		h.owned[u.entityID] = true
		attrs := u.attributes(u.installed, false, nil)
		h.writeState(u.entityID, updateState(u.installed, u.latest, nil), attrs, false, Context{ID: fmt.Sprintf("01J9UPD%019d", rng.Int63())})
	}
}

// attributes are UpdateEntity.state_attributes.
func (u *updateSpec) attributes(installed string, inProgress bool, skipped *string) map[string]any {
	var summary any
	if u.notes != "" {
		s := u.notes
		if len(s) > 255 {
			s = s[:255]
		}
		summary = s
	}
	var url any
	if u.releaseURL != "" {
		url = u.releaseURL
	}
	picture := "https://brands.home-assistant.io/_/" + u.platform + "/icon.png"
	if u.platform == "hassio" {
		picture = "https://brands.home-assistant.io/homeassistant/icon.png"
	}
	attrs := map[string]any{"auto_update": u.autoUpdate, "display_precision": 0, "installed_version": installed, "in_progress": inProgress,
		"latest_version": u.latest, "release_summary": summary, "release_url": url, "skipped_version": nil, "title": u.title,
		"update_percentage": nil, "entity_picture": picture, "friendly_name": u.name, "supported_features": u.features}
	if skipped != nil {
		attrs["skipped_version"] = *skipped
	}
	if u.deviceClass != "" {
		attrs["device_class"] = u.deviceClass
	}
	return attrs
}

// updateState is UpdateEntity.state: on while a newer, unskipped version is offered.
func updateState(installed, latest string, skipped *string) string {
	if skipped != nil && *skipped == latest || installed == latest {
		return "off"
	}
	return "on"
}

func (h *Home) registerUpdate() {
	h.addService(&serviceDef{domain: "update", name: "install", title: "Install update", desc: "Installs an update for a device or service.",
		target: "update", feature: updInstall, fields: []field{
			{name: "version", kind: kString, desc: "The version to install. If omitted, the latest version will be installed.", example: "1.0.0"},
			{name: "backup", kind: kBool, desc: "If supported by the integration, this creates a backup before starting the update."}},
		entity: func(c *call, st *State) (any, error) { return nil, c.installUpdate(st) }})
	h.addService(&serviceDef{domain: "update", name: "skip", title: "Skip update", desc: "Marks currently available update as skipped.", target: "update",
		entity: func(c *call, st *State) (any, error) { return nil, c.skipUpdate(st, true) }})
	h.addService(&serviceDef{domain: "update", name: "clear_skipped", title: "Clear skipped update", desc: "Removes the skipped version marker from an update.", target: "update",
		entity: func(c *call, st *State) (any, error) { return nil, c.skipUpdate(st, false) }})
}

func skippedOf(st *State) *string {
	if s, ok := st.Attributes["skipped_version"].(string); ok {
		return &s
	}
	return nil
}

// installUpdate is async_install's checks, then the install: in progress, then the new version.
func (c *call) installUpdate(st *State) error {
	u := updateSpecOf(st.EntityID)
	if u == nil {
		return &HAError{Msg: "Update of " + st.EntityID + " failed: no such software"}
	}
	installed, _ := st.Attributes["installed_version"].(string)
	version, hasVersion := c.data["version"].(string)
	backup, _ := c.data["backup"].(bool)
	switch {
	case !hasVersion && installed == u.latest:
		return &HAError{Msg: "No update available for " + st.EntityID}
	case hasVersion && u.features&updSpecificVersion == 0:
		return &HAError{Msg: "Installing a specific version is not supported for " + st.EntityID}
	case backup && u.features&updBackup == 0:
		return &HAError{Msg: "Backup is not supported for " + st.EntityID}
	case st.Attributes["in_progress"] != false:
		return &HAError{Msg: "Update installation already in progress for " + st.EntityID}
	}
	if !hasVersion {
		version = u.latest
	}
	skipped := skippedOf(st)
	c.set(st.EntityID, st.State, u.attributes(installed, true, skipped))
	if u.hacsID != "" {
		if err := c.h.HACSDownload(u.hacsID, version); err != nil {
			c.set(st.EntityID, st.State, u.attributes(installed, false, skipped))
			return &HAError{Msg: err.Error()}
		}
	}
	if backup {
		c.h.Log("info", "homeassistant.components.hassio", "Creating a backup before updating %s", u.title)
	}
	c.h.Log("info", "homeassistant.components.update", "Installed %s %s (was %s)", u.title, version, installed)
	if skipped != nil && (*skipped == version || *skipped != u.latest) {
		skipped = nil
	}
	c.set(st.EntityID, updateState(version, u.latest, skipped), u.attributes(version, false, skipped))
	if u.restarts && c.h.onRestart != nil {
		// Core comes back on the new version: clients see it go away once the call is answered.
		c.h.Log("warning", "homeassistant.core", "Home Assistant restarts to finish the update to %s", version)
		time.AfterFunc(20*time.Millisecond, c.h.onRestart)
	}
	return nil
}

// skipUpdate is async_skip / async_clear_skipped.
func (c *call) skipUpdate(st *State, skip bool) error {
	u := updateSpecOf(st.EntityID)
	if u == nil {
		return &HAError{Msg: "Update of " + st.EntityID + " failed: no such software"}
	}
	verb := "Skipping update"
	if !skip {
		verb = "Clearing skipped update"
	}
	if u.autoUpdate {
		return &HAError{Msg: verb + " is not supported for " + st.EntityID}
	}
	installed, _ := st.Attributes["installed_version"].(string)
	var skipped *string
	if skip {
		if installed == u.latest {
			return &HAError{Msg: "No update available to skip for " + u.name}
		}
		skipped = &u.latest
	}
	inProgress, _ := st.Attributes["in_progress"].(bool)
	c.set(st.EntityID, updateState(installed, u.latest, skipped), u.attributes(installed, inProgress, skipped))
	return nil
}

// UpdateReleaseNotes is WS update/release_notes: the full notes, or nil when the software
// has none. An unknown entity is a NotFoundError, one without the feature a NotSupportedError.
func (h *Home) UpdateReleaseNotes(entityID string) (*string, error) {
	h.mu.Lock()
	_, exists := h.states[entityID]
	h.mu.Unlock()
	u := updateSpecOf(strings.ToLower(entityID))
	if u == nil || !exists {
		return nil, &NotFoundError{Msg: "Entity not found"}
	}
	if u.features&updReleaseNotes == 0 {
		return nil, &NotSupportedError{Msg: "Entity does not support release notes"}
	}
	notes := u.notes
	if u.platform == "hassio" {
		// The add-on's changelog from the installed version up (hassio's _strip_release_notes).
		h.mu.Lock()
		installed, _ := h.states[entityID].Attributes["installed_version"].(string)
		h.mu.Unlock()
		if before, _, found := strings.Cut(notes, "# "+installed); found && strings.Contains(before, "# "+u.latest) {
			notes = before
		}
	}
	return &notes, nil
}
