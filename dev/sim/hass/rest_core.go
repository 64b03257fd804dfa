package hass

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func (s *Server) routes() {
	rt := &router{notFound: "404: Not Found"}
	s.mux = rt
	rt.handle("GET", "/api/websocket", s.handleWS)
	rt.handle("GET", "/api/", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		message(w, 200, "API running.")
	}))
	rt.handle("GET", "/api/config", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		writeJSON(w, 200, s.h.Config())
	}))
	rt.handle("GET", "/api/core/state", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		writeJSON(w, 200, coreState{State: s.h.CoreState(), RecorderState: recorderState{}})
	}))
	rt.handle("GET", "/api/components", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		writeJSON(w, 200, s.h.Components())
	}))
	rt.handle("GET", "/api/events", s.authed(false, s.listEvents))
	rt.handle("POST", "/api/events/{event_type}", s.authed(true, s.fireEvent))
	rt.handle("GET", "/api/services", s.authed(false, s.listServices))
	rt.handle("POST", "/api/services/{domain}/{service}", s.authed(false, s.callService))
	rt.handle("GET", "/api/states", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		writeJSON(w, 200, s.h.States())
	}))
	rt.handle("GET", "/api/states/{entity_id}", s.authed(false, s.getState))
	rt.handle("POST", "/api/states/{entity_id}", s.authed(true, s.postState))
	rt.handle("DELETE", "/api/states/{entity_id}", s.authed(true, s.deleteState))
	rt.handle("POST", "/api/template", s.authed(true, s.renderTemplateREST))
	if !s.o.JournalLog {
		rt.handle("GET", "/api/error_log", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
			plain(w, 200, s.h.LogText(0))
		}))
	}
	rt.handle("GET", "/api/hassio/{rest:*}", s.authed(true, s.hassioLogs))
	rt.handle("GET", "/api/calendars", s.authed(false, s.listCalendars))
	rt.handle("GET", "/api/calendars/{entity_id}", s.authed(false, s.calendarEvents))
	rt.handle("POST", "/api/config/core/check_config", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		writeJSON(w, 200, s.h.CheckConfig())
	}))
	for _, kind := range home.ConfigKinds() {
		kind := kind
		base := "/api/config/" + kind + "/config/{key}"
		rt.handle("GET", base, s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) { s.getConfigItem(w, kind, p["key"]) }))
		rt.handle("POST", base, s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
			s.postConfigItem(w, r, kind, p["key"], u)
		}))
		rt.handle("DELETE", base, s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
			s.deleteConfigItem(w, kind, p["key"], u)
		}))
	}
	rt.handle("GET", "/api/camera_proxy/{entity_id}", s.cameraProxy)
	rt.handle("POST", "/api/intent/handle", s.authed(false, s.handleIntent))
	if s.rec != nil {
		rt.handle("GET", "/api/history/period", s.authed(false, s.historyREST))
		rt.handle("GET", "/api/history/period/{start}", s.authed(false, s.historyREST))
		rt.handle("GET", "/api/logbook", s.authed(false, s.logbookREST))
		rt.handle("GET", "/api/logbook/{start}", s.authed(false, s.logbookREST))
	}
	for _, extra := range extraRoutes {
		extra(s, rt)
	}
}

// extraRoutes lets feature files register REST routes from their own init functions, so adding
// an endpoint does not mean editing this list.
var extraRoutes []func(s *Server, rt *router)

type recorderState struct {
	MigrationInProgress bool `json:"migration_in_progress"`
	MigrationIsLive     bool `json:"migration_is_live"`
}

type coreState struct {
	State         string        `json:"state"`
	RecorderState recorderState `json:"recorder_state"`
}

func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, maxBody))
}

// readObject reads a JSON object body the way most HA views do, answering 400 with the view's
// own messages for invalid JSON and for JSON that is not an object.
func readObject(w http.ResponseWriter, r *http.Request, invalidJSON, notObject string) (map[string]any, bool) {
	body, err := readBody(r)
	if err != nil {
		plain(w, 400, badRequest)
		return nil, false
	}
	var v any
	if err := decodeJSON(body, &v); err != nil {
		message(w, 400, invalidJSON)
		return nil, false
	}
	data, ok := v.(map[string]any)
	if !ok {
		message(w, 400, notObject)
		return nil, false
	}
	return data, true
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, p params, u *user) {
	counts := s.h.Listeners()
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]any{"event": n, "listener_count": counts[n]})
	}
	writeJSON(w, 200, out)
}

func (s *Server) fireEvent(w http.ResponseWriter, r *http.Request, p params, u *user) {
	body, err := readBody(r)
	if err != nil {
		plain(w, 400, badRequest)
		return
	}
	var data map[string]any
	if len(body) > 0 {
		var v any
		if err := decodeJSON(body, &v); err != nil {
			message(w, 400, "Event data should be valid JSON.")
			return
		}
		if v != nil {
			m, ok := v.(map[string]any)
			if !ok {
				message(w, 400, "Event data should be a JSON object")
				return
			}
			data = m
		}
	}
	typ := p["event_type"]
	if typ == "state_changed" && data != nil {
		for _, k := range []string{"old_state", "new_state"} {
			if st := stateFromDict(data[k]); st != nil {
				data[k] = st
			}
		}
	}
	s.h.FireEvent(typ, data, "REMOTE", u.ID)
	message(w, 200, "Event "+typ+" fired.")
}

// stateFromDict is State.from_dict: a dict with entity_id and state becomes a State.
func stateFromDict(v any) *home.State {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	id, _ := m["entity_id"].(string)
	st, ok := m["state"].(string)
	if id == "" || !ok {
		return nil
	}
	attrs, _ := m["attributes"].(map[string]any)
	out := &home.State{EntityID: id, State: st, Attributes: attrs}
	if ts, ok := m["last_changed"].(string); ok {
		out.LastChanged, _ = home.ParseTime(ts, time.UTC)
	}
	if ts, ok := m["last_updated"].(string); ok {
		out.LastUpdated, _ = home.ParseTime(ts, time.UTC)
	}
	if out.LastUpdated.IsZero() {
		out.LastUpdated = out.LastChanged
	}
	out.LastReported = out.LastUpdated
	if c, ok := m["context"].(map[string]any); ok {
		out.Context.ID, _ = c["id"].(string)
	}
	return out
}

func (s *Server) listServices(w http.ResponseWriter, r *http.Request, p params, u *user) {
	all := s.h.Services()
	domains := make([]string, 0, len(all))
	for d := range all {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	out := make([]map[string]any, 0, len(domains))
	for _, d := range domains {
		out = append(out, map[string]any{"domain": d, "services": all[d]})
	}
	writeJSON(w, 200, out)
}

func (s *Server) callService(w http.ResponseWriter, r *http.Request, p params, u *user) {
	body, err := readBody(r)
	if err != nil {
		plain(w, 400, badRequest)
		return
	}
	var raw any
	if len(body) > 0 {
		if err := decodeJSON(body, &raw); err != nil {
			message(w, 400, "Data should be valid JSON.")
			return
		}
	}
	domain, service := p["domain"], p["service"]
	_, wantResp := r.URL.Query()["return_response"]
	support, exists := s.h.ServiceSupport(domain, service)
	if exists && wantResp && support == home.ResponseNone {
		message(w, 400, "Service does not support responses. Remove return_response from request.")
		return
	}
	if exists && !wantResp && support == home.ResponseOnly {
		message(w, 400, "Service call requires responses but caller did not ask for responses. Add ?return_response to query parameters.")
		return
	}
	var data map[string]any
	if raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			plain(w, 400, badRequest) // vol.Invalid: expected a dictionary
			return
		}
		data = m
	}
	res, err := s.h.CallService(home.ServiceCall{Domain: domain, Service: service, Data: data, UserID: u.ID, ReturnResponse: wantResp})
	if err != nil {
		var nf *home.ServiceNotFoundError
		var inv *home.InvalidError
		if errors.As(err, &nf) || errors.As(err, &inv) {
			plain(w, 400, badRequest)
			return
		}
		plain(w, 500, serverError)
		return
	}
	if wantResp {
		writeJSON(w, 200, map[string]any{"changed_states": res.Changed, "service_response": res.Response})
		return
	}
	writeJSON(w, 200, res.Changed)
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request, p params, u *user) {
	st, ok := s.h.State(p["entity_id"])
	if !ok {
		message(w, 404, "Entity not found.")
		return
	}
	writeJSON(w, 200, st)
}

func (s *Server) postState(w http.ResponseWriter, r *http.Request, p params, u *user) {
	data, ok := readObject(w, r, "Invalid JSON specified.", "State data should be a JSON object")
	if !ok {
		return
	}
	stRaw, ok := data["state"]
	if !ok || stRaw == nil {
		message(w, 400, "No state attribute specified.")
		return
	}
	id := p["entity_id"]
	if !home.ValidEntityID(id) {
		message(w, 400, "Invalid entity ID specified.")
		return
	}
	state, ok := stRaw.(string)
	if !ok {
		state = pyStr(fromGo(stRaw))
	}
	if len(state) > 255 {
		message(w, 400, "Invalid state specified.")
		return
	}
	attrs, _ := data["attributes"].(map[string]any)
	force, _ := data["force_update"].(bool)
	st, created, err := s.h.SetState(id, state, normalizeNumbers(attrs), force, u.ID)
	if err != nil {
		message(w, 400, "Invalid state specified.")
		return
	}
	w.Header().Set("Location", "/api/states/"+id)
	status := 200
	if created {
		status = 201
	}
	writeJSON(w, status, st)
}

func (s *Server) deleteState(w http.ResponseWriter, r *http.Request, p params, u *user) {
	if s.h.RemoveState(p["entity_id"]) {
		message(w, 200, "Entity removed.")
		return
	}
	message(w, 404, "Entity not found.")
}

func (s *Server) renderTemplateREST(w http.ResponseWriter, r *http.Request, p params, u *user) {
	body, err := readBody(r)
	if err != nil {
		plain(w, 400, badRequest)
		return
	}
	var v any
	if err := decodeJSON(body, &v); err != nil {
		message(w, 400, "Error rendering template: "+pyJSONError(body, err))
		return
	}
	data, ok := v.(map[string]any)
	if !ok {
		message(w, 400, "Template data should be a JSON object")
		return
	}
	tpl, ok := data["template"].(string)
	if !ok {
		plain(w, 500, serverError) // KeyError in HA's view
		return
	}
	vars, _ := data["variables"].(map[string]any)
	out, _, err := RenderTemplate(tpl, vars, s.h.Snapshot())
	if err != nil {
		message(w, 400, templateMessage(err))
		return
	}
	plain(w, 200, out)
}

// decodeJSON decodes keeping integer-ness (json.Number).
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		//lint:ignore ST1005 Python's json error, verbatim, as HA answers it.
		return errors.New("Extra data")
	}
	return nil
}

// normalizeNumbers turns json.Number into int64/float64 so state attributes
// serialize as the numbers they were.
func normalizeNumbers(v map[string]any) map[string]any {
	if v == nil {
		return nil
	}
	return toGoNumbers(v).(map[string]any)
}

func toGoNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = toGoNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toGoNumbers(e)
		}
		return out
	}
	return v
}

// pyJSONError approximates json.JSONDecodeError's text.
func pyJSONError(body []byte, err error) string {
	if len(strings.TrimSpace(string(body))) == 0 {
		return "Expecting value: line 1 column 1 (char 0)"
	}
	return err.Error()
}
