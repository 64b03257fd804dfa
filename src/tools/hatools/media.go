package hatools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetMedia is the toolset of cameras and media players.
const SetMedia = "media"

type snapshotArgs struct {
	EntityID string `json:"entity_id" validate:"required,entity_id" example:"camera.front_door"`
	MaxKB    int    `json:"max_kb,omitempty" jsonschema:"largest still in KB (default 1024)" validate:"omitempty,min=1,max=5120"`
}

// snapshot is a camera still returned as MCP image content plus one line describing it.
type snapshot struct {
	entityID, mime string
	data           []byte
	at             time.Time
}

func (s snapshot) MCPContent() []mcp.Content {
	return []mcp.Content{
		&mcp.ImageContent{Data: s.data, MIMEType: s.mime},
		&mcp.TextContent{Text: fmt.Sprintf("%s still, %d KB %s, taken %s", s.entityID, (len(s.data)+1023)/1024, s.mime, s.at.Format(time.RFC3339))},
	}
}

// Media player features (MediaPlayerEntityFeature bits) the actions need.
const (
	mpPause      = 1
	mpVolumeSet  = 4
	mpVolumeMute = 8
	mpPrevious   = 16
	mpNext       = 32
	mpTurnOn     = 128
	mpTurnOff    = 256
	mpPlayMedia  = 512
	mpVolumeStep = 1024
	mpSource     = 2048
	mpStop       = 4096
	mpPlay       = 16384
	mpShuffle    = 32768
	mpRepeat     = 262144
)

// playerActions maps each action to its service and the features that allow it (any of them).
var playerActions = map[string]struct {
	service  string
	features int
}{
	"play": {"media_play", mpPlay}, "pause": {"media_pause", mpPause}, "play_pause": {"media_play_pause", mpPlay | mpPause},
	"stop": {"media_stop", mpStop}, "next": {"media_next_track", mpNext}, "previous": {"media_previous_track", mpPrevious},
	"volume_set": {"volume_set", mpVolumeSet}, "volume_up": {"volume_up", mpVolumeSet | mpVolumeStep},
	"volume_down": {"volume_down", mpVolumeSet | mpVolumeStep}, "volume_mute": {"volume_mute", mpVolumeMute},
	"select_source": {"select_source", mpSource}, "play_media": {"play_media", mpPlayMedia},
	"turn_on": {"turn_on", mpTurnOn}, "turn_off": {"turn_off", mpTurnOff},
	"shuffle_set": {"shuffle_set", mpShuffle}, "repeat_set": {"repeat_set", mpRepeat},
}

type playerArgs struct {
	EntityID         string   `json:"entity_id" validate:"required,entity_id" example:"media_player.kitchen_speaker"`
	Action           string   `json:"action" validate:"required,oneof=play pause play_pause stop next previous volume_set volume_up volume_down volume_mute select_source play_media turn_on turn_off shuffle_set repeat_set" example:"pause"`
	Volume           *float64 `json:"volume,omitempty" jsonschema:"volume_set" validate:"omitempty,gte=0,lte=1"`
	Muted            *bool    `json:"muted,omitempty" jsonschema:"volume_mute"`
	Source           string   `json:"source,omitempty" jsonschema:"select_source: from source_list" validate:"omitempty,max=255"`
	MediaContentID   string   `json:"media_content_id,omitempty" jsonschema:"play_media: URL or media id" validate:"omitempty,max=2000"`
	MediaContentType string   `json:"media_content_type,omitempty" jsonschema:"play_media: music, video, playlist…" validate:"omitempty,max=64"`
	Enqueue          string   `json:"enqueue,omitempty" jsonschema:"play_media" validate:"omitempty,oneof=play next add replace"`
	Shuffle          *bool    `json:"shuffle,omitempty" jsonschema:"shuffle_set"`
	Repeat           string   `json:"repeat,omitempty" jsonschema:"repeat_set" validate:"omitempty,oneof=off all one"`
}

type playerResult struct {
	EntityID string   `json:"entity_id"`
	Action   string   `json:"action"`
	State    string   `json:"state"`
	Volume   *float64 `json:"volume,omitempty"`
	Muted    *bool    `json:"muted,omitempty"`
	Source   string   `json:"source,omitempty"`
	Title    string   `json:"media_title,omitempty"`
	Artist   string   `json:"media_artist,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// playerState reads one media player.
func playerState(ctx context.Context, ha *homeassistant.Client, id string) (homeassistant.State, error) {
	return stateOf(ctx, ha, id, "find media players with ha_get_states domain=media_player")
}

// supportedActions lists the actions a player's supported_features allow.
func supportedActions(features int) []string {
	var out []string
	for name, a := range playerActions {
		if features&a.features != 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// mediaTools are the camera and media player tools, in the order tools/list shows them.
func mediaTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getCameraSnapshot(d), controlMediaPlayer(d)}
}

// getCameraSnapshot is ha_get_camera_snapshot.
func getCameraSnapshot(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[snapshotArgs, toolkit.Contents]{
		Name: "ha_get_camera_snapshot", Toolset: SetMedia, Title: "Camera snapshot",
		Description: "A camera's current still, as an image you can see. A still over max_kb is refused, not cut.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a snapshotArgs) (toolkit.Contents, error) {
			return d.cameraSnapshot(ctx, a)
		},
	})
}

// cameraSnapshot fetches a camera's still through HA's camera proxy, refusing one over max_kb.
func (d Deps) cameraSnapshot(ctx context.Context, a snapshotArgs) (toolkit.Contents, error) {
	if !strings.HasPrefix(a.EntityID, "camera.") {
		return nil, toolkit.InvalidArg("entity_id", "must be a camera entity (camera.*)", `{"entity_id": "camera.front_door"}`)
	}
	limit := a.MaxKB
	if limit == 0 {
		limit = 1024
	}
	img, ct, err := d.HA.CameraProxy(ctx, a.EntityID)
	var api *homeassistant.APIError
	if errors.As(err, &api) && api.Status == http.StatusServiceUnavailable {
		// HA's camera proxy answers 503 when the camera is off or has no image, not when HA is down.
		return nil, &toolkit.Error{Code: "camera_unavailable", Message: a.EntityID + " has no image right now (Home Assistant answered 503: the camera is off or not streaming)",
			Hint: "check its state with ha_get_entity_details; camera.turn_on may wake it"}
	}
	if err != nil {
		return nil, haError(err, false, "find cameras with ha_get_states domain=camera")
	}
	mime, _, _ := strings.Cut(ct, ";")
	if !strings.HasPrefix(mime, "image/") {
		return nil, toolkit.Backend("Home Assistant", fmt.Errorf("the camera proxy sent %q, not an image", ct), false, "")
	}
	if len(img) > limit<<10 {
		return nil, &toolkit.Error{Code: "too_large", Field: "max_kb",
			Message: fmt.Sprintf("the still from %s is %d KB, over max_kb=%d", a.EntityID, (len(img)+1023)/1024, limit),
			Hint:    fmt.Sprintf("repeat with a larger max_kb (at least %d, at most 5120) if the user needs the image", (len(img)+1023)/1024)}
	}
	return snapshot{entityID: a.EntityID, mime: mime, data: img, at: time.Now().UTC()}, nil
}

// controlMediaPlayer is ha_control_media_player.
func controlMediaPlayer(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[playerArgs, playerResult]{
		Name: "ha_control_media_player", Toolset: SetMedia, Title: "Control a media player",
		Description: "Control a media player (playback, volume, source, play_media, power, shuffle, repeat); each action takes its own argument. Unsupported actions are refused with the supported ones. Returns the new state.",
		Destructive: false,
		Idempotent:  false,
		Summary:     func(a playerArgs) string { return a.Action + " " + a.EntityID },
		Handler: func(ctx context.Context, c *toolkit.Call, a playerArgs) (playerResult, error) {
			return d.controlPlayer(ctx, a)
		},
	})
}

// controlPlayer checks the action against the player's features and arguments, calls its
// media_player service and reports the player's new state.
func (d Deps) controlPlayer(ctx context.Context, a playerArgs) (playerResult, error) {
	if !strings.HasPrefix(a.EntityID, "media_player.") {
		return playerResult{}, toolkit.InvalidArg("entity_id", "must be a media player (media_player.*)", `{"entity_id": "media_player.kitchen_speaker"}`)
	}
	st, err := playerState(ctx, d.HA, a.EntityID)
	if err != nil {
		return playerResult{}, err
	}
	features := 0
	if f, ok := st.Attributes["supported_features"].(float64); ok {
		features = int(f)
	}
	act := playerActions[a.Action]
	if features&act.features == 0 {
		return playerResult{}, toolkit.InvalidArg("action", fmt.Sprintf("%s is not supported by %s; it supports: %s", a.Action, a.EntityID, strings.Join(supportedActions(features), ", ")), "")
	}
	data, err := playerData(a, st)
	if err != nil {
		return playerResult{}, err
	}
	changed, _, err := d.HA.CallService(ctx, "media_player", act.service, data, false)
	if err != nil {
		return playerResult{}, haError(err, false, "read the player's attributes with ha_get_entity_details")
	}
	return playerOutcome(a, st, changed), nil
}

// playerData is the service data of an action, with the one argument the action needs.
func playerData(a playerArgs, st homeassistant.State) (map[string]any, error) {
	data := map[string]any{"entity_id": a.EntityID}
	switch a.Action {
	case "volume_set":
		if a.Volume == nil {
			return nil, toolkit.InvalidArg("volume", "is required for volume_set (0 to 1)", `{"volume": 0.3}`)
		}
		data["volume_level"] = *a.Volume
	case "volume_mute":
		if a.Muted == nil {
			return nil, toolkit.InvalidArg("muted", "is required for volume_mute", `{"muted": true}`)
		}
		data["is_volume_muted"] = *a.Muted
	case "select_source":
		var sources []string
		if list, ok := st.Attributes["source_list"].([]any); ok {
			for _, s := range list {
				if s, ok := s.(string); ok {
					sources = append(sources, s)
				}
			}
		}
		if !slices.Contains(sources, a.Source) {
			return nil, toolkit.InvalidArg("source", fmt.Sprintf("must be one of %s's sources: %s (got %q)", a.EntityID, strings.Join(sources, ", "), a.Source), "")
		}
		data["source"] = a.Source
	case "play_media":
		if a.MediaContentID == "" || a.MediaContentType == "" {
			return nil, toolkit.InvalidArg("media_content_id", "and media_content_type are required for play_media", `{"media_content_id": "https://example.com/stream.mp3", "media_content_type": "music"}`)
		}
		data["media_content_id"], data["media_content_type"] = a.MediaContentID, a.MediaContentType
		if a.Enqueue != "" {
			data["enqueue"] = a.Enqueue
		}
	case "shuffle_set":
		if a.Shuffle == nil {
			return nil, toolkit.InvalidArg("shuffle", "is required for shuffle_set", `{"shuffle": true}`)
		}
		data["shuffle"] = *a.Shuffle
	case "repeat_set":
		if a.Repeat == "" {
			return nil, toolkit.InvalidArg("repeat", "is required for repeat_set", `{"repeat": "all"}`)
		}
		data["repeat"] = a.Repeat
	}
	return data, nil
}

// playerOutcome reports the player as the call left it (as it was when nothing changed).
func playerOutcome(a playerArgs, st homeassistant.State, changed []homeassistant.State) playerResult {
	out := playerResult{EntityID: a.EntityID, Action: a.Action}
	now := st
	for _, s := range changed {
		if s.EntityID == a.EntityID {
			now = s
		}
	}
	if len(changed) == 0 {
		out.Note = "the player reported no change (it may already be in that state)"
	}
	out.State = now.State
	if v, ok := now.Attributes["volume_level"].(float64); ok {
		out.Volume = &v
	}
	if m, ok := now.Attributes["is_volume_muted"].(bool); ok {
		out.Muted = &m
	}
	out.Source, _ = now.Attributes["source"].(string)
	out.Title, _ = now.Attributes["media_title"].(string)
	out.Artist, _ = now.Attributes["media_artist"].(string)
	return out
}
