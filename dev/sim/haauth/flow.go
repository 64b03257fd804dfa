package haauth

import (
	"crypto/subtle"
	"encoding/json"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

var handlerLocal = []any{"homeassistant", nil}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// jsonMessage is HA's json_message shape.
func jsonMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg})
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (p *Provider) providers(w http.ResponseWriter, r *http.Request) {
	ip := net.ParseIP(remoteIP(r))
	local := ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
	writeJSON(w, http.StatusOK, map[string]any{
		"providers":             []map[string]any{{"name": "Home Assistant Local", "id": nil, "type": "homeassistant"}},
		"preselect_remember_me": local,
	})
}

func formStep(flowID string, errors map[string]string) map[string]any {
	if errors == nil {
		errors = map[string]string{}
	}
	return map[string]any{
		"type":    "form",
		"flow_id": flowID,
		"handler": handlerLocal,
		"step_id": "init",
		"data_schema": []map[string]any{
			{"type": "string", "name": "username", "required": true},
			{"type": "string", "name": "password", "required": true},
		},
		"errors":                   errors,
		"description_placeholders": nil,
		"last_step":                nil,
		"preview":                  nil,
	}
}

// newFlow starts a login flow for the local provider, remembering the caller's IP: HA refuses to
// continue a flow from another address.
func (p *Provider) newFlow(clientID, redirectURI string, r *http.Request) string {
	id := hexID()
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tidyLocked(now)
	p.flows[id] = &flow{clientID: clientID, redirectURI: redirectURI, ip: remoteIP(r), created: now}
	return id
}

// loginFlowIndex is POST /auth/login_flow.
func (p *Provider) loginFlowIndex(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil {
		jsonMessage(w, http.StatusBadRequest, "Invalid JSON.")
		return
	}
	clientID, ok1 := body["client_id"].(string)
	redirectURI, ok2 := body["redirect_uri"].(string)
	handler, ok3 := body["handler"]
	switch {
	case !ok1:
		jsonMessage(w, http.StatusBadRequest, "Message format incorrect: required key not provided @ data['client_id']")
		return
	case !ok3:
		jsonMessage(w, http.StatusBadRequest, "Message format incorrect: required key not provided @ data['handler']")
		return
	case !ok2:
		jsonMessage(w, http.StatusBadRequest, "Message format incorrect: required key not provided @ data['redirect_uri']")
		return
	}
	if !verifyRedirectURI(clientID, redirectURI) {
		jsonMessage(w, http.StatusBadRequest, "invalid client id or redirect uri")
		return
	}
	if !isLocalHandler(handler) {
		jsonMessage(w, http.StatusNotFound, "Invalid handler specified")
		return
	}
	writeJSON(w, http.StatusOK, formStep(p.newFlow(clientID, redirectURI, r), nil))
}

func isLocalHandler(h any) bool {
	switch v := h.(type) {
	case string:
		return v == "homeassistant"
	case []any:
		return len(v) == 2 && v[0] == "homeassistant" && v[1] == nil
	}
	return false
}

// loginFlowStep is /auth/login_flow/<flow_id>. HA's frontend posts JSON; the simulator's login page
// works without JavaScript, so a form post is also accepted and answered the way the frontend
// would act: a redirect to the client with the code, or the page again with the error.
func (p *Provider) loginFlowStep(w http.ResponseWriter, r *http.Request) {
	flowID := r.PathValue("flow_id")
	switch r.Method {
	case http.MethodGet:
		jsonMessage(w, http.StatusNotFound, "Invalid flow specified")
		return
	case http.MethodDelete:
		p.mu.Lock()
		_, ok := p.flows[flowID]
		delete(p.flows, flowID)
		p.mu.Unlock()
		if !ok {
			jsonMessage(w, http.StatusNotFound, "Invalid flow specified")
			return
		}
		jsonMessage(w, http.StatusOK, "Flow aborted")
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	browser := strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
	var in map[string]string
	if browser {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		in = map[string]string{}
		for k := range r.PostForm {
			in[k] = r.PostForm.Get(k)
		}
	} else {
		var raw map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&raw); err != nil {
			jsonMessage(w, http.StatusBadRequest, "Invalid JSON.")
			return
		}
		in = map[string]string{}
		for k, v := range raw {
			if s, ok := v.(string); ok {
				in[k] = s
			}
		}
	}
	clientID := in["client_id"]
	if !verifyClientID(clientID) {
		jsonMessage(w, http.StatusBadRequest, "Invalid client id")
		return
	}
	p.mu.Lock()
	f, ok := p.flows[flowID]
	p.mu.Unlock()
	if !ok {
		jsonMessage(w, http.StatusNotFound, "Invalid flow specified")
		return
	}
	if f.ip != remoteIP(r) {
		jsonMessage(w, http.StatusBadRequest, "IP address changed")
		return
	}
	user, ok := p.checkPassword(in["username"], in["password"])
	if !ok {
		if browser {
			p.renderLogin(w, http.StatusOK, loginPage{FlowID: flowID, ClientID: f.clientID, RedirectURI: f.redirectURI, State: in["state"], Username: in["username"], Error: "Invalid username or password"})
			return
		}
		writeJSON(w, http.StatusOK, formStep(flowID, map[string]string{"base": "invalid_auth"}))
		return
	}
	code := hexID()
	now := p.now()
	p.mu.Lock()
	delete(p.flows, flowID)
	p.codes[code] = &authCode{clientID: clientID, userID: user.ID, expires: now.Add(CodeLifetime)}
	p.mu.Unlock()
	if browser {
		http.Redirect(w, r, withQuery(f.redirectURI, url.Values{"code": {code}, "state": {in["state"]}}), http.StatusFound)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"version": 1, "minor_version": 1, "type": "create_entry", "flow_id": flowID, "handler": handlerLocal,
		"title": "Home Assistant Local", "description": nil, "description_placeholders": nil, "options": map[string]any{},
		"result": code,
	})
}

// checkPassword compares in constant time so the simulator does not teach a timing side channel.
func (p *Provider) checkPassword(username, password string) (User, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, u := range p.users {
		uOK := subtle.ConstantTimeCompare([]byte(strings.ToLower(strings.TrimSpace(username))), []byte(strings.ToLower(u.Username))) == 1
		pOK := subtle.ConstantTimeCompare([]byte(password), []byte(u.Password)) == 1
		if uOK && pOK {
			return u, true
		}
	}
	return User{}, false
}

func withQuery(raw string, add url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for k, vs := range add {
		for _, v := range vs {
			if v != "" {
				q.Set(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

type loginPage struct {
	FlowID, ClientID, RedirectURI, State, Username, Error string
}

// authorizePage is GET /auth/authorize: HA's frontend login page, reduced to a plain form. Like the
// frontend it starts a login flow for the local provider before showing the form.
func (p *Provider) authorizePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	if !verifyRedirectURI(clientID, redirectURI) {
		p.renderLogin(w, http.StatusBadRequest, loginPage{Error: "Invalid redirect URI: the client id and redirect URI must share scheme and host"})
		return
	}
	id := p.newFlow(clientID, redirectURI, r)
	p.renderLogin(w, http.StatusOK, loginPage{FlowID: id, ClientID: clientID, RedirectURI: redirectURI, State: q.Get("state")})
}

func (p *Provider) renderLogin(w http.ResponseWriter, status int, page loginPage) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = loginTmpl.Execute(w, page)
}

var loginTmpl = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Home Assistant</title>
<style>body{font-family:sans-serif;background:#fafafa;display:flex;justify-content:center;padding-top:10vh}
main{background:#fff;padding:24px 32px;border-radius:12px;box-shadow:0 2px 8px #0002;min-width:300px}
label{display:block;margin:12px 0 4px}input{width:100%;padding:8px;box-sizing:border-box}
button{margin-top:16px;padding:8px 16px;background:#03a9f4;color:#fff;border:0;border-radius:4px}
.error{color:#b00020}</style></head>
<body><main>
<h1>Home Assistant</h1>
{{if .ClientID}}<p>You're about to give <b>{{.ClientID}}</b> access to your Home Assistant instance.</p>{{end}}
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .FlowID}}<form method="post" action="/auth/login_flow/{{.FlowID}}">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<input type="hidden" name="state" value="{{.State}}">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" value="{{.Username}}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>{{end}}
</main></body></html>
`))
