package haauth

import (
	"net/http"
	"time"
)

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	body := map[string]any{"error": code}
	if desc != "" {
		body["error_description"] = desc
	}
	writeJSON(w, status, body)
}

// token is POST /auth/token (components/auth/__init__.py TokenView).
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	// IndieAuth 6.3.5: the token endpoint also revokes.
	if r.PostForm.Get("action") == "revoke" {
		p.revokeToken(r.PostForm.Get("token"))
		w.WriteHeader(http.StatusOK)
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		p.grantCode(w, r)
	case "refresh_token":
		p.grantRefresh(w, r)
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

func (p *Provider) grantCode(w http.ResponseWriter, r *http.Request) {
	clientID := r.PostForm.Get("client_id")
	if clientID == "" || !verifyClientID(clientID) {
		tokenError(w, http.StatusBadRequest, "invalid_request", "Invalid client id")
		return
	}
	code := r.PostForm.Get("code")
	if code == "" {
		tokenError(w, http.StatusBadRequest, "invalid_request", "Invalid code")
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tidyLocked(now)
	ac, ok := p.codes[code]
	// A code is bound to the client that asked for it and used once, even when the attempt fails.
	delete(p.codes, code)
	if !ok || ac.clientID != clientID || !now.Before(ac.expires) {
		tokenError(w, http.StatusBadRequest, "invalid_request", "Invalid code")
		return
	}
	if _, ok := p.userByID(ac.userID); !ok {
		tokenError(w, http.StatusForbidden, "access_denied", "User is not active")
		return
	}
	rt := &refreshToken{id: hexID(), clientID: clientID, userID: ac.userID, lastUsed: now}
	refresh := randomHex(64)
	p.refresh[refresh] = rt
	access := p.issueAccessLocked(rt, now)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":     access,
		"token_type":       "Bearer",
		"refresh_token":    refresh,
		"expires_in":       int(AccessTokenLifetime.Seconds()),
		"ha_auth_provider": "homeassistant",
	})
}

func (p *Provider) grantRefresh(w http.ResponseWriter, r *http.Request) {
	clientID := r.PostForm.Get("client_id")
	if clientID != "" && !verifyClientID(clientID) {
		tokenError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	token := r.PostForm.Get("refresh_token")
	if token == "" {
		tokenError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tidyLocked(now)
	rt, ok := p.refresh[token]
	if !ok {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "")
		return
	}
	if rt.clientID != clientID {
		tokenError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	if _, ok := p.userByID(rt.userID); !ok {
		tokenError(w, http.StatusForbidden, "access_denied", "User is not active")
		return
	}
	rt.lastUsed = now
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": p.issueAccessLocked(rt, now),
		"token_type":   "Bearer",
		"expires_in":   int(AccessTokenLifetime.Seconds()),
	})
}

func (p *Provider) issueAccessLocked(rt *refreshToken, now time.Time) string {
	t := randomHex(48)
	p.access[t] = &accessToken{refreshID: rt.id, userID: rt.userID, expires: now.Add(AccessTokenLifetime)}
	return t
}

// revoke is POST /auth/revoke: always 200, whether or not the token was known.
func (p *Provider) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err == nil {
		p.revokeToken(r.PostForm.Get("token"))
	}
	w.WriteHeader(http.StatusOK)
}

// revokeToken ends a refresh token and every access token made from it.
func (p *Provider) revokeToken(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rt, ok := p.refresh[token]; ok {
		p.dropRefreshLocked(token, rt)
	}
}
