package hass

import (
	"net/http"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// loginHandler puts Home Assistant's login side (/auth/*: providers, the authorize page, the
// login flow, token and revoke) in front of the API router, and lets access tokens issued by it
// authenticate like long-lived tokens do.
func (s *Server) loginHandler(next http.Handler) http.Handler {
	if s.o.Auth == nil {
		return next
	}
	mux := http.NewServeMux()
	s.o.Auth.Register(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/auth/") {
			mux.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loginUser resolves an access token issued by the login side.
func (s *Server) loginUser(tok string) *user {
	if s.o.Auth == nil {
		return nil
	}
	u, ok := s.o.Auth.CurrentUser(tok)
	if !ok {
		return nil
	}
	for _, hu := range s.h.Users() {
		if hu.ID == u.ID {
			return &user{User: hu}
		}
	}
	return &user{User: home.User{ID: u.ID, Name: u.Name, IsAdmin: u.Admin}}
}

// AddToken makes tok another long-lived token of the user with userID (HA lets a user hold
// several). It reports whether that user exists.
func (s *Server) AddToken(tok, userID string) bool {
	for _, hu := range s.h.Users() {
		if hu.ID == userID {
			s.tokMu.Lock()
			s.tokens[tok] = &user{User: hu}
			s.tokMu.Unlock()
			return true
		}
	}
	return false
}
