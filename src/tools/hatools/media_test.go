package hatools_test

import (
	"bytes"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func testMedia(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	res := dtCall(t, cs, "ha_get_camera_snapshot", map[string]any{"entity_id": "camera.front_door"})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("snapshot: %s", dtText(res))
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/jpeg" {
		t.Fatalf("snapshot content: %#v", res.Content[0])
	}
	if _, err := jpeg.Decode(bytes.NewReader(img.Data)); err != nil {
		t.Errorf("snapshot is not a JPEG: %v", err)
	}
	if !strings.Contains(dtText(res), "camera.front_door still") {
		t.Errorf("snapshot caption: %q", dtText(res))
	}

	var p struct {
		State  string   `json:"state"`
		Volume *float64 `json:"volume"`
		Muted  *bool    `json:"muted"`
		Source string   `json:"source"`
	}
	player := func(args map[string]any) {
		t.Helper()
		args["entity_id"] = "media_player.kitchen_speaker"
		dtOK(t, cs, "ha_control_media_player", args, &p)
	}
	player(map[string]any{"action": "pause"})
	if p.State != "paused" {
		t.Errorf("pause: %+v", p)
	}
	player(map[string]any{"action": "play"})
	player(map[string]any{"action": "volume_set", "volume": 0.5})
	if p.Volume == nil || *p.Volume != 0.5 {
		t.Errorf("volume_set: %+v", p)
	}
	player(map[string]any{"action": "volume_mute", "muted": true})
	if p.Muted == nil || !*p.Muted {
		t.Errorf("mute: %+v", p)
	}
	player(map[string]any{"action": "select_source", "source": "Radio 1"})
	if p.Source != "Radio 1" || p.State != "playing" {
		t.Errorf("select_source: %+v", p)
	}
	player(map[string]any{"action": "next"})
	dtOK(t, cs, "ha_control_media_player", map[string]any{"entity_id": "media_player.living_room_tv", "action": "turn_on"}, &p)
	if p.State == "off" {
		t.Errorf("tv turn_on: %+v", p)
	}

	dtErrCases(t, cs, []dtErrCase{
		{"not a camera", "ha_get_camera_snapshot", map[string]any{"entity_id": "light.kitchen_ceiling"}, "invalid_argument", "entity_id", ""},
		{"image over max_kb", "ha_get_camera_snapshot", map[string]any{"entity_id": "camera.garden", "max_kb": 1}, "too_large", "max_kb", "KB"},
		{"unknown camera (HA 404)", "ha_get_camera_snapshot", map[string]any{"entity_id": "camera.attic"}, "not_found", "", ""},
		{"max_kb too big", "ha_get_camera_snapshot", map[string]any{"entity_id": "camera.garden", "max_kb": 99999}, "invalid_argument", "max_kb", ""},
		{"unsupported action", "ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "turn_on"}, "invalid_argument", "action", "volume_set"},
		{"unknown source", "ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "select_source", "source": "HDMI 9"}, "invalid_argument", "source", "Jazz Classics"},
		{"volume missing", "ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "volume_set"}, "invalid_argument", "volume", ""},
		{"volume out of range", "ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "volume_set", "volume": 1.5}, "invalid_argument", "volume", ""},
		{"bad action", "ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "dance"}, "invalid_argument", "action", ""},
		{"unknown player", "ha_control_media_player", map[string]any{"entity_id": "media_player.attic", "action": "play"}, "not_found", "", ""},
		{"play_media without type", "ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "play_media", "media_content_id": "x"}, "invalid_argument", "media_content_id", ""},
	})
}
