package hass

import (
	"errors"
	"net/http"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// REST views of homeassistant/components/config/config_entries.py: reloading and removing a
// config entry, and the config and options flows (helpers/data_entry_flow.py's
// FlowManagerIndexView and FlowManagerResourceView). Starting and stepping a flow needs an
// administrator; aborting one does not (the resource views leave delete to the base class).
func init() {
	extraRoutes = append(extraRoutes, func(s *Server, rt *router) {
		const base = "/api/config/config_entries"
		rt.handle("POST", base+"/entry/{entry_id}/reload", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
			entryResult(w, func() (bool, error) { return s.h.ReloadEntry(p["entry_id"]) })
		}))
		rt.handle("DELETE", base+"/entry/{entry_id}", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
			entryResult(w, func() (bool, error) { return s.h.RemoveEntry(p["entry_id"]) })
		}))
		for _, options := range []bool{false, true} {
			options := options
			prefix := base + "/flow"
			if options {
				prefix = base + "/options/flow"
			}
			rt.handle("POST", prefix, s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
				startFlow(w, r, s.h, options)
			}))
			rt.handle("GET", prefix+"/{flow_id}", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
				flowAnswer(w, func() (map[string]any, error) { return s.h.ConfigureFlow(options, p["flow_id"], nil, false) })
			}))
			rt.handle("POST", prefix+"/{flow_id}", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
				input, ok := flowInput(w, r)
				if ok {
					flowAnswer(w, func() (map[string]any, error) { return s.h.ConfigureFlow(options, p["flow_id"], input, true) })
				}
			}))
			rt.handle("DELETE", prefix+"/{flow_id}", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
				if err := s.h.AbortFlow(options, p["flow_id"]); err != nil {
					flowFailure(w, err)
					return
				}
				message(w, 200, "Flow aborted")
			}))
		}
	})
}

// entryResult answers {"require_restart": …}, or 404 "Invalid entry specified".
func entryResult(w http.ResponseWriter, run func() (bool, error)) {
	restart, err := run()
	var nf *home.NotFoundError
	switch {
	case errors.As(err, &nf):
		message(w, 404, "Invalid entry specified")
	case err != nil:
		plain(w, 500, serverError)
	default:
		writeJSON(w, 200, map[string]any{"require_restart": restart})
	}
}

// startFlow reads {handler, show_advanced_options} as RequestDataValidator does (extra keys
// allowed) and starts the flow.
func startFlow(w http.ResponseWriter, r *http.Request, h *home.Home, options bool) {
	data, ok := readObject(w, r, "Invalid JSON.", "Message format incorrect: expected a dictionary")
	if !ok {
		return
	}
	raw, present := data["handler"]
	if !present {
		message(w, 400, "Message format incorrect: required key not provided @ data['handler']")
		return
	}
	handler, isStr := raw.(string)
	if !isStr {
		message(w, 400, "Message format incorrect: expected str for dictionary value @ data['handler']")
		return
	}
	flowAnswer(w, func() (map[string]any, error) {
		if options {
			return h.StartOptionsFlow(handler)
		}
		return h.StartFlow(handler)
	})
}

// flowInput is vol.Schema(dict) with allow_empty: an empty body is {}.
func flowInput(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	body, err := readBody(r)
	if err != nil {
		plain(w, 400, badRequest)
		return nil, false
	}
	if len(body) == 0 {
		return map[string]any{}, true
	}
	var v any
	if err := decodeJSON(body, &v); err != nil {
		message(w, 400, "Invalid JSON.")
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		message(w, 400, "Message format incorrect: expected dict")
		return nil, false
	}
	return m, true
}

func flowAnswer(w http.ResponseWriter, run func() (map[string]any, error)) {
	res, err := run()
	if err != nil {
		flowFailure(w, err)
		return
	}
	writeJSON(w, 200, res)
}

func flowFailure(w http.ResponseWriter, err error) {
	var fe *home.FlowError
	switch {
	case errors.As(err, &fe) && fe.Errors != nil:
		writeJSON(w, fe.Status, map[string]any{"errors": fe.Errors})
	case errors.As(err, &fe) && fe.Status < 500:
		message(w, fe.Status, fe.Msg)
	default:
		plain(w, 500, serverError)
	}
}
