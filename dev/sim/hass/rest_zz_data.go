package hass

import (
	"errors"
	"net/http"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// REST views of the conversation and shopping_list integrations.
func init() { extraRoutes = append(extraRoutes, dataRoutes) }

func dataRoutes(s *Server, rt *router) {
	// The integrations' own bus listeners exist from startup, as /api/events shows.
	s.h.ListenCore()
	rt.handle("POST", "/api/conversation/process", s.authed(false, s.conversationREST))
	rt.handle("GET", "/api/shopping_list", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		writeJSON(w, 200, s.h.ShoppingItems())
	}))
	rt.handle("POST", "/api/shopping_list/item", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		data, ok := validatedBody(w, r)
		if !ok {
			return
		}
		name, isStr := data["name"].(string)
		if _, has := data["name"]; !has {
			message(w, 400, "Message format incorrect: required key not provided @ data['name']")
			return
		}
		if !isStr {
			message(w, 400, "Message format incorrect: expected str for dictionary value @ data['name']")
			return
		}
		writeJSON(w, 200, s.h.AddShoppingItem(name, u.ID))
	}))
	rt.handle("POST", "/api/shopping_list/item/{item_id}", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		body, err := readBody(r)
		if err != nil {
			plain(w, 400, badRequest)
			return
		}
		var v any
		if err := decodeJSON(body, &v); err != nil {
			plain(w, 500, serverError) // request.json() raises outside the view's handlers
			return
		}
		data, _ := v.(map[string]any)
		var name *string
		var complete *bool
		for k, val := range data {
			switch k {
			case "name":
				sv, ok := val.(string)
				if !ok {
					message(w, 400, "Item not found") // vol.Invalid answers with this text in HA
					return
				}
				name = &sv
			case "complete":
				bv, ok := val.(bool)
				if !ok {
					message(w, 400, "Item not found")
					return
				}
				complete = &bv
			default:
				message(w, 400, "Item not found")
				return
			}
		}
		item, err := s.h.UpdateShoppingItem(p["item_id"], name, complete, u.ID)
		var nf *home.NotFoundError
		if errors.As(err, &nf) {
			message(w, 404, "Item not found")
			return
		}
		writeJSON(w, 200, item)
	}))
	rt.handle("POST", "/api/shopping_list/clear_completed", s.authed(false, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
		s.h.ClearCompletedShoppingItems(u.ID)
		message(w, 200, "Cleared completed items.")
	}))
}

// validatedBody reads a JSON object the way RequestDataValidator does.
func validatedBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	return readObject(w, r, "Invalid JSON.", "Message format incorrect: expected a dictionary")
}

// conversationREST is ConversationProcessView: the same answer as WS conversation/process.
func (s *Server) conversationREST(w http.ResponseWriter, r *http.Request, p params, u *user) {
	data, ok := validatedBody(w, r)
	if !ok {
		return
	}
	if _, has := data["text"]; !has {
		message(w, 400, "Message format incorrect: required key not provided @ data['text']")
		return
	}
	for _, k := range []string{"text", "conversation_id", "language"} {
		if v, has := data[k]; has {
			if _, isStr := v.(string); !isStr {
				message(w, 400, "Message format incorrect: expected str for dictionary value @ data['"+k+"']")
				return
			}
		}
	}
	for k := range data {
		switch k {
		case "text", "conversation_id", "language", "agent_id":
		default:
			message(w, 400, "Message format incorrect: extra keys not allowed @ data['"+k+"']")
			return
		}
	}
	if _, has := data["agent_id"]; has && agentError(data) != "" {
		message(w, 400, "Message format incorrect: invalid agent ID for dictionary value @ data['agent_id']")
		return
	}
	writeJSON(w, 200, s.h.Converse(str(data, "text"), str(data, "language"), str(data, "conversation_id"), u.ID))
}
