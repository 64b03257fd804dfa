package hubitattools

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// A lock driver's log line carries the code it set. The model reads neither the code nor, through the
// text filter, whether a guess of it is in the log.
func TestHubLogsHideSecrets(t *testing.T) {
	lines := []hubitat.LogEntry{
		{Source: "Front Door", Level: "info", Message: `setCode: code=1234 for slot 2 ("Anna")`},
		{Source: "Front Door", Level: "info", Message: "locked by keypad"},
	}
	page := pageLogs(lines, toolkit.Page{})
	for _, r := range page.Items {
		if strings.Contains(r.Message, "1234") {
			t.Errorf("a lock code reached the answer: %q", r.Message)
		}
	}
	if got := (logFilter{text: "1234"}).apply(lines); len(got) != 0 {
		t.Errorf("the text filter found the code: %+v", got)
	}
	if got := (logFilter{text: "slot 2"}).apply(lines); len(got) != 1 {
		t.Errorf("the text filter lost what is shown: %+v", got)
	}
}

// A model "changing" a driver's password preference never reads the stored one back: not in the
// question the user sees, not in the answer, not in the undo it is offered.
func TestDevicePreferenceSecretsStayHidden(t *testing.T) {
	m := hubitat.DeviceModel{ID: "7", Label: "Camera", Settings: []hubitat.Setting{
		{Name: "camPassword", Type: "password", Value: "hunter2-stored"},
		{Name: "api_key", Type: "text", Value: "k-123456"},
		{Name: "logEnable", Type: "bool", Value: "true"},
	}}
	a := updateDeviceArgs{Preferences: map[string]string{"camPassword": "x", "api_key": "y", "logEnable": "false"}}
	q := updateQuestion(m, a)
	for _, secret := range []string{"hunter2-stored", "k-123456"} {
		if strings.Contains(q, secret) {
			t.Errorf("the question shows a stored secret: %s", q)
		}
	}
	if !strings.Contains(q, `logEnable: "true" → "false"`) {
		t.Errorf("the question does not say the plain change: %s", q)
	}
	var changes []deviceChange
	for _, s := range m.Settings {
		changes = append(changes, deviceChange{Property: "preference." + s.Name, From: shownSetting(s, s.Value), To: shownSetting(s, a.Preferences[s.Name])})
	}
	undo := undoOf("7", changes)
	if strings.Contains(undo, "hunter2") || strings.Contains(undo, "k-123456") || strings.Contains(undo, "camPassword") || !strings.Contains(undo, "logEnable") {
		t.Errorf("the undo carries a secret or drops the plain change: %s", undo)
	}
}
