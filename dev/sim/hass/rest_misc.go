package hass

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func (s *Server) listCalendars(w http.ResponseWriter, r *http.Request, p params, u *user) {
	cals := s.h.Calendars()
	if cals == nil {
		cals = []home.CalendarInfo{}
	}
	writeJSON(w, 200, cals)
}

// calendarEvents answers 400 with an empty body for every bad request, as
// HA's CalendarEventView does.
func (s *Server) calendarEvents(w http.ResponseWriter, r *http.Request, p params, u *user) {
	q := r.URL.Query()
	loc := s.h.Location()
	start, err1 := home.ParseTime(q.Get("start"), loc)
	end, err2 := home.ParseTime(q.Get("end"), loc)
	if !strings.HasPrefix(p["entity_id"], "calendar.") || q.Get("start") == "" || q.Get("end") == "" || err1 != nil || err2 != nil || start.After(end) {
		w.WriteHeader(400)
		return
	}
	evs, err := s.h.CalendarEvents(p["entity_id"], start, end)
	if err != nil {
		w.WriteHeader(400)
		return
	}
	out := make([]map[string]any, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.APIJSON(loc))
	}
	writeJSON(w, 200, out)
}

func (s *Server) getConfigItem(w http.ResponseWriter, kind, key string) {
	raw, ok := s.h.ConfigItem(kind, key)
	if !ok {
		message(w, 404, "Resource not found")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	_, _ = w.Write(raw)
}

func (s *Server) postConfigItem(w http.ResponseWriter, r *http.Request, kind, key string, u *user) {
	body, err := readBody(r)
	if err != nil {
		plain(w, 400, badRequest)
		return
	}
	if err := s.h.PutConfigItem(kind, key, body, u.ID); err != nil {
		var ce *home.ConfigError
		if errors.As(err, &ce) {
			message(w, 400, ce.Msg)
			return
		}
		message(w, 500, err.Error())
		return
	}
	writeJSON(w, 200, map[string]string{"result": "ok"})
}

func (s *Server) deleteConfigItem(w http.ResponseWriter, kind, key string, u *user) {
	if err := s.h.DeleteConfigItem(kind, key, u.ID); err != nil {
		var nf *home.NotFoundError
		if errors.As(err, &nf) {
			message(w, 400, "Resource not found") // HA answers 400 here, not 404
			return
		}
		message(w, 500, err.Error())
		return
	}
	writeJSON(w, 200, map[string]string{"result": "ok"})
}

// cameraProxy serves a still: auth by bearer token or the camera's own
// access_token (as in entity_picture).
func (s *Server) cameraProxy(w http.ResponseWriter, r *http.Request, p params) {
	id := p["entity_id"]
	st, ok := s.h.State(id)
	if !ok || !strings.HasPrefix(id, "camera.") {
		plain(w, 404, "404: Not Found")
		return
	}
	tokOK := false
	if t := r.URL.Query().Get("token"); t != "" {
		if at, _ := st.Attributes["access_token"].(string); at != "" && t == at {
			tokOK = true
		}
	}
	if !tokOK && s.authenticate(r) == nil {
		plain(w, 401, "401: Unauthorized")
		return
	}
	if st.State == "off" || st.State == "unavailable" {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	img, err := cameraImage(id, s.h.Now())
	if err != nil {
		plain(w, 500, serverError)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(200)
	_, _ = w.Write(img)
}

// historyREST is GET /api/history/period[/<start>].
func (s *Server) historyREST(w http.ResponseWriter, r *http.Request, p params, u *user) {
	q := r.URL.Query()
	now := s.h.Now()
	start := now.Add(-24 * time.Hour)
	if p["start"] != "" {
		t, err := home.ParseTime(p["start"], time.UTC)
		if err != nil {
			message(w, 400, "Invalid datetime")
			return
		}
		start = t
	}
	end := start.Add(24 * time.Hour)
	if v := q.Get("end_time"); v != "" {
		t, err := home.ParseTime(v, time.UTC)
		if err != nil {
			message(w, 400, "Invalid end_time")
			return
		}
		end = t
	}
	raw := q.Get("filter_entity_id")
	if raw == "" {
		message(w, 400, "filter_entity_id is missing")
		return
	}
	ids := splitIDs(raw)
	for _, id := range ids {
		if !home.ValidEntityID(id) {
			message(w, 400, "Invalid filter_entity_id")
			return
		}
	}
	if start.After(now) || !end.After(start) {
		writeJSON(w, 200, []any{})
		return
	}
	_, minimal := q["minimal_response"]
	_, noAttrs := q["no_attributes"]
	_, skipInitial := q["skip_initial_state"]
	sig := q.Get("significant_changes_only")
	res, err := s.rec.History(r.Context(), historyOpts(ids, start, end, !skipInitial, sig != "0" && sig != "false", minimal, noAttrs))
	if err != nil {
		plain(w, 500, serverError)
		return
	}
	out := []any{}
	for _, id := range ids {
		rows := res[id]
		if len(rows) == 0 {
			continue
		}
		list := make([]any, 0, len(rows))
		for _, row := range rows {
			if row.Attributes == nil {
				list = append(list, map[string]any{"state": row.State, "last_changed": home.ISOTime(row.LastChanged)})
				continue
			}
			list = append(list, map[string]any{"entity_id": row.EntityID, "state": row.State, "attributes": row.Attributes,
				"last_changed": home.ISOTime(row.LastChanged), "last_updated": home.ISOTime(row.LastUpdated)})
		}
		out = append(out, list)
	}
	writeJSON(w, 200, out)
}

func splitIDs(raw string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, p := range strings.Split(raw, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p != "" && !seen[p] {
			seen[p] = true
			ids = append(ids, p)
		}
	}
	return ids
}

// logbookREST is GET /api/logbook[/<start>].
func (s *Server) logbookREST(w http.ResponseWriter, r *http.Request, p params, u *user) {
	q := r.URL.Query()
	loc := s.h.Location()
	n := s.h.Now().In(loc)
	start := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	if p["start"] != "" {
		t, err := home.ParseTime(p["start"], time.UTC)
		if err != nil {
			message(w, 400, "Invalid datetime")
			return
		}
		start = t
	}
	var end time.Time
	if v := q.Get("end_time"); v != "" {
		t, err := home.ParseTime(v, time.UTC)
		if err != nil {
			message(w, 400, "Invalid end_time")
			return
		}
		end = t
	} else {
		period := 1
		if v := q.Get("period"); v != "" {
			if _, err := parsePositiveInt(v, &period); err != nil {
				message(w, 400, "Invalid period")
				return
			}
		}
		start = start.AddDate(0, 0, -(period - 1))
		end = start.AddDate(0, 0, period)
	}
	var ids []string
	if v := q.Get("entity"); v != "" {
		ids = splitIDs(v)
		for _, id := range ids {
			if !home.ValidEntityID(id) {
				message(w, 400, "Invalid entity id "+id)
				return
			}
		}
	}
	ctxID := q.Get("context_id")
	if ctxID != "" && len(ids) > 0 {
		message(w, 400, "Can't combine entity with context_id")
		return
	}
	if start.After(s.h.Now()) {
		writeJSON(w, 200, []any{})
		return
	}
	entries, err := s.rec.Logbook(r.Context(), start, end, ids)
	if err != nil {
		plain(w, 500, serverError)
		return
	}
	out := []any{}
	for _, e := range entries {
		if ctxID != "" && e.ContextID != ctxID {
			continue
		}
		m := logbookJSON(e, true)
		m["when"] = home.ISOTime(e.When)
		out = append(out, m)
	}
	writeJSON(w, 200, out)
}

func parsePositiveInt(s string, dst *int) (int, error) {
	n := 0
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
		if n > 100000 {
			return 0, errors.New("too large")
		}
	}
	if n < 1 {
		return 0, errors.New("must be positive")
	}
	*dst = n
	return n, nil
}

// logbookJSON drops empty fields like HA; REST keeps "name" for entity
// rows, the WS API does not.
func logbookJSON(e logbookEntry, withName bool) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"entity_id": e.EntityID, "state": e.State, "message": e.Message, "domain": e.Domain,
		"icon": e.Icon, "source": e.Source, "context_id": e.ContextID, "name": e.Name} {
		if v != "" {
			m[k] = v
		}
	}
	if !withName && e.EntityID != "" && e.State != "" {
		delete(m, "name")
	}
	return m
}

// handleIntent is POST /api/intent/handle for the basic on/off intents.
func (s *Server) handleIntent(w http.ResponseWriter, r *http.Request, p params, u *user) {
	m, ok := validatedBody(w, r)
	if !ok {
		return
	}
	name, ok := m["name"].(string)
	if !ok {
		message(w, 400, "Message format incorrect: required key not provided @ data['name']")
		return
	}
	slots, _ := m["data"].(map[string]any)
	writeJSON(w, 200, s.runIntent(name, slots, u))
}

func intentResponse(speech, kind string, data map[string]any) map[string]any {
	return map[string]any{
		"speech":        map[string]any{"plain": map[string]any{"speech": speech, "extra_data": nil}},
		"card":          map[string]any{},
		"language":      "en",
		"response_type": kind,
		"data":          data,
	}
}

func (s *Server) runIntent(name string, slots map[string]any, u *user) map[string]any {
	svc := map[string]string{"HassTurnOn": "turn_on", "HassTurnOff": "turn_off", "HassToggle": "toggle"}[name]
	if svc == "" {
		return intentResponse("Unknown intent "+name, "error", map[string]any{"code": "no_intent_match"})
	}
	target, _ := slots["name"].(string)
	area, _ := slots["area"].(string)
	snap := s.h.Snapshot()
	var ids []string
	var names []map[string]any
	for _, st := range snap.States() {
		if target != "" && !strings.EqualFold(st.Name(), target) && st.EntityID != target {
			continue
		}
		if area != "" && !strings.EqualFold(snap.AreaName(st.EntityID), area) && snap.AreaID(st.EntityID) != area {
			continue
		}
		if target == "" && area == "" {
			continue
		}
		switch st.Domain() {
		case "light", "switch", "fan", "input_boolean", "media_player", "cover", "climate":
		default:
			if target == "" {
				continue
			}
		}
		ids = append(ids, st.EntityID)
		names = append(names, map[string]any{"type": "entity", "name": st.Name(), "id": st.EntityID})
	}
	if len(ids) == 0 {
		return intentResponse("No device or entity named "+target+area, "error", map[string]any{"code": "no_valid_targets"})
	}
	list := make([]any, len(ids))
	for i, id := range ids {
		list[i] = id
	}
	if _, err := s.h.CallService(home.ServiceCall{Domain: "homeassistant", Service: svc, Target: map[string]any{"entity_id": list}, UserID: u.ID}); err != nil {
		return intentResponse("An unexpected error occurred: "+err.Error(), "error", map[string]any{"code": "failed_to_handle"})
	}
	verb := map[string]string{"turn_on": "Turned on", "turn_off": "Turned off", "toggle": "Toggled"}[svc]
	label := names[0]["name"].(string)
	if len(names) > 1 {
		label = "the devices"
	}
	return intentResponse(verb+" "+label, "action_done", map[string]any{"targets": []any{}, "success": names, "failed": []any{}})
}
