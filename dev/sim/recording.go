package sim

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/hamcp/hamcp/dev/sim/recorder"
)

// openRecorder opens the recorder DB, generating history for the demo
// entities first when the file does not exist yet.
func openRecorder(ctx context.Context, path string, states []*home.State, o Options, now time.Time) (*recorder.DB, error) {
	if _, err := os.Stat(path); err == nil {
		return recorder.Open(path)
	}
	days := o.HistoryDays
	if days == 0 {
		days = 3
	}
	if days < 0 {
		return recorder.Create(path)
	}
	specs := historySpecs(states)
	if _, err := recorder.Generate(ctx, path, recorder.GenerateOptions{Entities: specs, Days: days, Now: now, Seed: o.Seed}); err != nil {
		return nil, err
	}
	return recorder.Open(path)
}

// historySpecs describes each demo entity's past so generated history looks
// like the live home: numbers wander around today's value, on/off things
// toggle, modes switch between their usual values.
func historySpecs(states []*home.State) []recorder.EntitySpec {
	var out []recorder.EntitySpec
	for _, s := range states {
		spec := recorder.EntitySpec{EntityID: s.EntityID, FriendlyName: s.Name()}
		spec.Unit, _ = s.Attributes["unit_of_measurement"].(string)
		spec.DeviceClass, _ = s.Attributes["device_class"].(string)
		spec.StateClass, _ = s.Attributes["state_class"].(string)
		switch s.Domain() {
		case "sensor":
			v, err := strconv.ParseFloat(s.State, 64)
			if err != nil {
				spec.Kind, spec.Values = "static", []string{s.State}
				break
			}
			spec.Kind = "numeric"
			switch spec.StateClass {
			case "total_increasing", "total":
				spec.Min, spec.Max = v*0.97, v
			default:
				span := v * 0.15
				if span < 1 {
					span = 1
				}
				spec.Min, spec.Max = v-span, v+span
				if v >= 0 && spec.Min < 0 {
					spec.Min = 0
				}
			}
			if spec.Max <= spec.Min {
				spec.Max = spec.Min + 1
			}
		case "binary_sensor", "light", "switch", "input_boolean", "automation":
			spec.Kind, spec.Values = "binary", []string{"off", "on"}
		case "lock":
			spec.Kind, spec.Values = "binary", []string{"locked", "unlocked"}
		case "cover":
			spec.Kind, spec.Values = "binary", []string{"closed", "open"}
		case "person", "device_tracker":
			spec.Kind, spec.Values = "enum", []string{"home", "not_home", "Work"}
		case "media_player":
			spec.Kind, spec.Values = "enum", []string{"off", "idle", "playing", "paused"}
		case "climate":
			spec.Kind, spec.Values = "enum", []string{"heat", "auto", "off"}
		default:
			spec.Kind, spec.Values = "static", []string{s.State}
			if s.State == "" {
				spec.Values = []string{"unknown"}
			}
		}
		out = append(out, spec)
	}
	return out
}

// recordAll writes the startup states, as HA's recorder does on start, so
// history ends with what the live home shows.
func (h *Home) recordAll() {
	for _, s := range h.model.States() {
		h.recordState(s.EntityID, s)
	}
}

// record is the bus subscriber that feeds the recorder, one event at a
// time in bus order (HA's single recorder thread).
func (h *Home) record(e home.Event) {
	if e.EventType == "state_changed" {
		id, _ := e.Data["entity_id"].(string)
		ns, _ := e.Data["new_state"].(*home.State)
		h.recordState(id, ns)
		return
	}
	h.recMu.Lock()
	defer h.recMu.Unlock()
	if h.rec == nil {
		return
	}
	data := map[string]any{}
	if raw, err := json.Marshal(e.Data); err == nil {
		_ = json.Unmarshal(raw, &data)
	}
	if err := h.rec.RecordEvent(context.Background(), recorder.Event{EventType: e.EventType, Data: data, TimeFired: e.TimeFired, Origin: e.Origin, ContextID: e.Context.ID}); err != nil {
		h.log.Warn("recorder: event not written", "event_type", e.EventType, "err", err)
	}
}

// recordState writes a state row; a nil state records the removal.
func (h *Home) recordState(id string, s *home.State) {
	h.recMu.Lock()
	defer h.recMu.Unlock()
	if h.rec == nil {
		return
	}
	row := recorder.State{EntityID: id, LastUpdated: time.Now().UTC()}
	if s != nil {
		attrs := map[string]any{}
		if raw, err := json.Marshal(s.Attributes); err == nil {
			_ = json.Unmarshal(raw, &attrs)
		}
		row.State, row.Attributes = s.State, attrs
		row.LastChanged, row.LastUpdated, row.ContextID = s.LastChanged, s.LastUpdated, s.Context.ID
	}
	if err := h.rec.RecordState(context.Background(), row); err != nil {
		h.log.Warn("recorder: state not written", "entity_id", id, "err", err)
	}
}

// purger is what the recorder package offers for recorder.purge, once it has it.
type purger interface {
	Purge(ctx context.Context, keepDays int, repack bool) error
}

func (h *Home) registerRecorderServices() {
	h.model.RegisterService("recorder", "purge", "Starts purge task - to clean up old data from your database.",
		[]home.Field{{Name: "keep_days", Type: "int", Description: "Number of days to keep the data in the database.", Min: f(0), Max: f(365)},
			{Name: "repack", Type: "bool", Description: "Attempt to save disk space by rewriting the entire database file."},
			{Name: "apply_filter", Type: "bool", Description: "Apply entity_id and event_type filters in addition to time-based purge."}},
		home.ResponseNone, func(sc home.ServiceCall) (any, error) {
			keep := 10
			if v, ok := sc.Data["keep_days"].(int); ok {
				keep = v
			}
			repack, _ := sc.Data["repack"].(bool)
			h.recMu.Lock()
			defer h.recMu.Unlock()
			p, ok := any(h.rec).(purger)
			if !ok || h.rec == nil {
				return nil, &home.HAError{Msg: "recorder purge is not available in this simulator build"}
			}
			return nil, p.Purge(context.Background(), keep, repack)
		})
}

func f(v float64) *float64 { return &v }

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// newJWT makes a token shaped like HA's long-lived access tokens (HS256 JWT
// with iss/iat/exp), signed with a throwaway key.
func newJWT() (string, error) {
	iss, err := randomHex(16)
	if err != nil {
		return "", err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	now := time.Now().Unix()
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := enc.EncodeToString([]byte(fmt.Sprintf(`{"iss":"%s","iat":%d,"exp":%d}`, iss, now, now+10*365*86400)))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(head + "." + body))
	return head + "." + body + "." + enc.EncodeToString(mac.Sum(nil)), nil
}
