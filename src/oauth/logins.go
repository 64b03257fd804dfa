package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"sync"
	"time"
)

// A login is one authorization request on its way through Home Assistant and the consent page. It
// lives in memory for ten minutes: if hamcp restarts mid-login the user simply starts again.
type login struct {
	id            string // also the state hamcp sends to Home Assistant
	browser       string // hash of the browser cookie that started it
	clientID      string
	clientName    string
	cimd          bool
	refresh       bool
	redirectURI   string
	redirectGiven bool
	challenge     string
	scope         string
	resource      string
	state         string
	created       time.Time

	// Set once Home Assistant has said who the user is.
	userID, userName string
	csrf             string
}

const maxLogins = 1000

var errTooManyLogins = errors.New("too many logins in progress")

type logins struct {
	mu sync.Mutex
	m  map[string]*login
}

func newLogins() *logins { return &logins{m: map[string]*login{}} }

func (l *logins) add(x *login, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, old := range l.m {
		if now.Sub(old.created) > loginTTL {
			delete(l.m, id)
		}
	}
	if len(l.m) >= maxLogins {
		return errTooManyLogins
	}
	l.m[x.id] = x
	return nil
}

// get returns a copy of a live login, so handlers never share mutable state.
func (l *logins) get(id string, now time.Time) (login, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x, ok := l.m[id]
	if !ok || now.Sub(x.created) > loginTTL {
		return login{}, false
	}
	return *x, true
}

// setUser records the HA user once; a replayed callback finds it already set and fails.
func (l *logins) setUser(id, userID, userName, csrf string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	x, ok := l.m[id]
	if !ok || x.userID != "" {
		return false
	}
	x.userID, x.userName, x.csrf = userID, userName, csrf
	return true
}

// take removes a login so its consent can be answered only once.
func (l *logins) take(id string) (login, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x, ok := l.m[id]
	if ok {
		delete(l.m, id)
		return *x, true
	}
	return login{}, false
}

func (l *logins) drop(id string) {
	l.mu.Lock()
	delete(l.m, id)
	l.mu.Unlock()
}

// The browser cookie ties the Home Assistant callback and the consent page to the browser that
// started the authorization, so a login link sent to someone else cannot be completed by them.
const browserCookie = "hamcp_oauth"

func (s *Server) browserID(r *http.Request) (string, bool) {
	c, err := r.Cookie(browserCookie)
	if err != nil || len(c.Value) != 43+len(browserPrefix) {
		return "", false
	}
	return c.Value, true
}

const browserPrefix = "b_"

func (s *Server) setBrowserCookie(w http.ResponseWriter, value string) {
	http.SetCookie(w, &http.Cookie{
		Name: browserCookie, Value: value, Path: "/oauth", MaxAge: int((loginTTL + 5*time.Minute).Seconds()),
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode,
	})
}

func (s *Server) secure() bool { return len(s.issuer) > 6 && s.issuer[:6] == "https:" }

func sameBrowser(x login, r *http.Request) bool {
	c, err := r.Cookie(browserCookie)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashSecret(c.Value)), []byte(x.browser)) == 1
}
