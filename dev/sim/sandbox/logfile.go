package sandbox

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// homeAssistantLog writes about n lines in HA's log format
// ("2026-03-04 15:07:01.123 INFO (MainThread) [logger] message"): a startup
// sequence, then a day of the usual warnings and errors, one with a
// traceback, ending at now. The same inputs give the same file.
func homeAssistantLog(now time.Time, version string, ents entities, n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(now.Unix()), uint64(n)))
	t := now.Add(-time.Duration(n) * 90 * time.Second)
	var b strings.Builder
	lines := 0
	emit := func(level, thread, logger, msg string) {
		t = t.Add(time.Duration(rng.IntN(900)) * time.Millisecond)
		fmt.Fprintf(&b, "%s.%03d %s (%s) [%s] %s\n", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/1e6, level, thread, logger, msg)
		lines++
	}
	emit("INFO", "MainThread", "homeassistant.bootstrap", "Config directory: /config")
	emit("WARNING", "SyncWorker_0", "homeassistant.loader", "We found a custom integration hacs which has not been tested by Home Assistant. This component might cause stability problems, be sure to disable it if you experience issues with Home Assistant")
	for _, c := range []string{"logger", "http", "recorder", "frontend", "mqtt", "sun", "met", "template", "automation", "script", "scene", "person", "zone", "backup", "hassio"} {
		emit("INFO", "MainThread", "homeassistant.setup", "Setting up "+c)
		emit("INFO", "MainThread", "homeassistant.setup", fmt.Sprintf("Setup of domain %s took %.2f seconds", c, rng.Float64()*1.5))
	}
	emit("INFO", "MainThread", "homeassistant.components.mqtt.client", "Connected to MQTT server core-mosquitto:1883 (0)")
	emit("INFO", "MainThread", "homeassistant.core", fmt.Sprintf("Starting Home Assistant %s", version))
	emit("INFO", "MainThread", "homeassistant.bootstrap", fmt.Sprintf("Home Assistant initialized in %.2fs", 8+rng.Float64()*10))
	routine := []func(){
		func() {
			emit("WARNING", "MainThread", "homeassistant.components.http.ban", fmt.Sprintf("Login attempt or request with invalid authentication from 192.168.1.%d (192.168.1.%[1]d). Requested URL: '/api/states'. (python-requests/2.32.3)", 20+rng.IntN(200)))
		},
		func() {
			emit("INFO", "Recorder", "homeassistant.components.recorder.purge", "Purging states and events before target 10 days ago")
		},
		func() {
			emit("WARNING", "MainThread", "homeassistant.helpers.template", fmt.Sprintf("Template variable warning: 'None' has no attribute 'state' when rendering '{{ states.%s.state }}'", ents.temps[0]))
		},
		func() {
			emit("INFO", "MainThread", "homeassistant.components.automation.hallway_light_on_motion", "Hallway light on motion: Running automation actions")
		},
		func() {
			emit("ERROR", "MainThread", "homeassistant.components.mqtt.client", "Failed to connect to MQTT server due to exception: [Errno 111] Connection refused")
		},
		func() {
			emit("WARNING", "MainThread", "homeassistant.components.sensor", fmt.Sprintf("Entity %s (<class 'homeassistant.components.mqtt.sensor.MqttSensor'>) is using native unit of measurement 'C' which is not a valid unit for the device class ('temperature') it is using", ents.temps[0]))
		},
		func() {
			emit("ERROR", "MainThread", "homeassistant.components.met.coordinator", "Unexpected error fetching met data")
			b.WriteString("Traceback (most recent call last):\n" +
				"  File \"/usr/src/homeassistant/homeassistant/helpers/update_coordinator.py\", line 380, in _async_refresh\n" +
				"    self.data = await self._async_update_data()\n" +
				"  File \"/usr/src/homeassistant/homeassistant/components/met/coordinator.py\", line 100, in _async_update_data\n" +
				"    raise UpdateFailed(f\"Update failed: {err}\") from err\n" +
				"homeassistant.helpers.update_coordinator.UpdateFailed: Update failed: Cannot connect to host api.met.no:443 ssl:default [Timeout]\n")
		},
		func() {
			emit("INFO", "MainThread", "homeassistant.components.light", fmt.Sprintf("%s turned on by automation", ents.lights[0]))
		},
	}
	for lines < n-1 {
		t = t.Add(time.Duration(rng.IntN(120)) * time.Second)
		routine[rng.IntN(len(routine))]()
	}
	if t.Before(now) {
		t = now.Add(-time.Second)
	}
	emit("INFO", "MainThread", "homeassistant.components.automation.good_morning", "Good morning: Running automation actions")
	return []byte(b.String())
}
