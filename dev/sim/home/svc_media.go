package home

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Media player feature bits (MediaPlayerEntityFeature).
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

	mpSpeaker = mpPause | mpVolumeSet | mpVolumeMute | mpPrevious | mpNext | mpPlayMedia | mpVolumeStep | mpSource | mpStop | mpPlay | mpShuffle | mpRepeat
	mpTV      = mpPause | mpVolumeSet | mpVolumeMute | mpPrevious | mpNext | mpTurnOn | mpTurnOff | mpVolumeStep | mpSource | mpStop | mpPlay
)

type track struct {
	title, artist, album string
	duration             int
}

// mediaModel is a player: a playlist position and the knobs HA exposes.
type mediaModel struct {
	state    string
	volume   float64
	muted    bool
	source   string
	sources  []string
	features int
	tracks   []track
	idx      int
	shuffle  bool
	repeat   string
	posAt    time.Time
	content  string
}

func (m *mediaModel) attributes() map[string]any {
	a := map[string]any{"supported_features": m.features, "source_list": toAny(m.sources)}
	if m.state == "off" {
		return a
	}
	a["volume_level"] = m.volume
	a["is_volume_muted"] = m.muted
	a["source"] = m.source
	if m.features&mpShuffle != 0 {
		a["shuffle"] = m.shuffle
		if m.repeat == "" {
			m.repeat = "off"
		}
		a["repeat"] = m.repeat
	}
	if m.state == "playing" || m.state == "paused" {
		t := m.tracks[m.idx%len(m.tracks)]
		kind := "music"
		if m.features&mpTurnOn != 0 {
			kind = "video"
		}
		if m.content != "" {
			a["media_content_id"] = m.content
		}
		a["media_content_type"] = kind
		a["media_title"] = t.title
		if t.artist != "" {
			a["media_artist"], a["media_album_name"] = t.artist, t.album
		}
		a["media_duration"] = t.duration
		a["media_position"] = 0
		a["media_position_updated_at"] = ISOTime(m.posAt)
	}
	return a
}

func (h *Home) registerMedia() {
	type svc struct {
		name, title, desc string
		feature           int
		fields            []field
		do                func(c *call, m *mediaModel) error
	}
	play := func(state string) func(c *call, m *mediaModel) error {
		return func(c *call, m *mediaModel) error {
			if m.state != "off" {
				m.state = state
			}
			return nil
		}
	}
	for _, s := range []svc{
		{"turn_on", "Turn on", "Turns on the power of the media player.", mpTurnOn, nil, func(c *call, m *mediaModel) error {
			if m.state == "off" {
				m.state = "on"
			}
			return nil
		}},
		{"turn_off", "Turn off", "Turns off the power of the media player.", mpTurnOff, nil, func(c *call, m *mediaModel) error { m.state = "off"; return nil }},
		{"media_play", "Play", "Starts playing.", mpPlay, nil, play("playing")},
		{"media_pause", "Pause", "Pauses.", mpPause, nil, func(c *call, m *mediaModel) error {
			if m.state == "playing" {
				m.state = "paused"
			}
			return nil
		}},
		{"media_play_pause", "Play/Pause", "Toggles play/pause.", mpPlay | mpPause, nil, func(c *call, m *mediaModel) error {
			switch m.state {
			case "playing":
				m.state = "paused"
			case "off":
			default:
				m.state = "playing"
			}
			return nil
		}},
		{"media_stop", "Stop", "Stops playing.", mpStop, nil, play("idle")},
		{"media_next_track", "Next", "Selects the next track.", mpNext, nil, func(c *call, m *mediaModel) error { m.idx = (m.idx + 1) % len(m.tracks); return nil }},
		{"media_previous_track", "Previous", "Selects the previous track.", mpPrevious, nil, func(c *call, m *mediaModel) error {
			m.idx = (m.idx + len(m.tracks) - 1) % len(m.tracks)
			return nil
		}},
		{"volume_set", "Set volume", "Sets the volume level.", mpVolumeSet, []field{{name: "volume_level", kind: kFloat, min: num(0), max: num(1), required: true, desc: "The volume. 0 is inaudible, 1 is the maximum volume."}},
			func(c *call, m *mediaModel) error { m.volume = round(c.float("volume_level"), 2); return nil }},
		{"volume_up", "Turn up volume", "Turns up the volume.", mpVolumeSet | mpVolumeStep, nil, func(c *call, m *mediaModel) error { m.volume = math.Min(1, round(m.volume+0.1, 2)); return nil }},
		{"volume_down", "Turn down volume", "Turns down the volume.", mpVolumeSet | mpVolumeStep, nil, func(c *call, m *mediaModel) error { m.volume = math.Max(0, round(m.volume-0.1, 2)); return nil }},
		{"volume_mute", "Mute/unmute volume", "Mutes or unmutes the media player.", mpVolumeMute, []field{{name: "is_volume_muted", kind: kBool, required: true, desc: "Defines whether or not it is muted."}},
			func(c *call, m *mediaModel) error { m.muted, _ = c.data["is_volume_muted"].(bool); return nil }},
		{"select_source", "Select source", "Sends the media player the command to change input source.", mpSource, []field{{name: "source", kind: kString, required: true, desc: "Name of the source to switch to.", example: "video1"}},
			func(c *call, m *mediaModel) error {
				src := c.str("source")
				if !contains(m.sources, src) {
					return &ServiceValidationError{Msg: fmt.Sprintf("Source %s is not valid. Valid sources are: %s", src, strings.Join(m.sources, ", ")), Key: "invalid_source", Domain: "media_player"}
				}
				m.source = src
				if m.state == "idle" || m.state == "on" {
					m.state = "playing"
				}
				return nil
			}},
		{"shuffle_set", "Shuffle", "Enables or disables the shuffle mode.", mpShuffle, []field{{name: "shuffle", kind: kBool, required: true, desc: "Whether the media should be played in randomized order or not."}},
			func(c *call, m *mediaModel) error { m.shuffle, _ = c.data["shuffle"].(bool); return nil }},
		{"repeat_set", "Repeat", "Sets the repeat mode.", mpRepeat, []field{{name: "repeat", kind: kEnum, options: []string{"off", "all", "one"}, required: true, desc: "Whether the media (one or all) should be played in a loop or not."}},
			func(c *call, m *mediaModel) error { m.repeat = c.str("repeat"); return nil }},
		{"play_media", "Play media", "Starts playing specified media.", mpPlayMedia, []field{
			{name: "media_content_id", kind: kString, required: true, desc: "The ID of the content to play."},
			{name: "media_content_type", kind: kString, required: true, desc: "The type of the content to play."},
			{name: "enqueue", kind: kEnum, options: []string{"play", "next", "add", "replace"}, desc: "If the content should be played now or be added to the queue."},
			{name: "announce", kind: kBool, desc: "If the media should be played as an announcement."},
			{name: "extra", kind: kObject, desc: "Extra data."},
		}, func(c *call, m *mediaModel) error {
			m.content, m.state = c.str("media_content_id"), "playing"
			return nil
		}},
	} {
		s := s
		h.addService(&serviceDef{domain: "media_player", name: s.name, title: s.title, desc: s.desc, target: "media_player", feature: s.feature, fields: s.fields,
			entity: func(c *call, st *State) (any, error) {
				m := c.h.media[st.EntityID]
				if m == nil {
					return nil, nil
				}
				prevIdx, prevState := m.idx, m.state
				if err := s.do(c, m); err != nil {
					return nil, err
				}
				if m.idx != prevIdx || (m.state == "playing" && prevState != "playing" && prevState != "paused") {
					m.posAt = c.h.now().UTC()
				}
				c.set(st.EntityID, m.state, withName(m.attributes(), st))
				return nil, nil
			}})
	}
}
