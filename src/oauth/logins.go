package oauth

import (
	"cmp"
	"crypto/subtle"
	"net/http"
	"slices"
	"sync"
	"time"
)

// A login is one authorization request on its way through Home Assistant and the consent page. It
// lives in memory for ten minutes: if hamcp restarts mid-login the user simply starts again. An
// expired login is remembered a while longer, so that a user who comes back late is sent back to
// the client with access_denied instead of leaving it waiting.
type login struct {
	id            string // also the state hamcp sends to Home Assistant
	browser       string // hash of the browser cookie that started it
	from          string // addressKey of the browser that started it
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
	seq           uint64 // order of arrival, for logins created within the same clock tick

	// Set once Home Assistant has said who the user is.
	userID, userName string
	csrf             string
}

// Bounds on logins in memory. Starting a login needs no credential, so instead of refusing
// everyone when the table is full, the oldest pending login of the busiest address gives way: one
// address (or a few) flooding /authorize only ever displaces its own logins. A login whose user
// already signed in at Home Assistant is an administrator's and is never displaced.
// (The bounds are maxLogins and maxLoginsPerAddr in quotas.go.)
const loginRemember = time.Hour // how long an expired login is remembered for the refusal redirect

type logins struct {
	mu           sync.Mutex
	m            map[string]*login
	seq          uint64
	max, perAddr int
}

func newLogins() *logins {
	return &logins{m: map[string]*login{}, max: maxLogins, perAddr: maxLoginsPerAddr}
}

// add stores x, forgetting what is too old and displacing pending logins over the quotas. It
// never refuses; the error stays in the signature for callers of the old contract.
func (l *logins) add(x *login, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	x.seq = l.seq
	pending := map[string][]*login{} // by address, unsorted
	total := 0
	for id, old := range l.m {
		switch age := now.Sub(old.created); {
		case age > loginTTL+loginRemember:
			delete(l.m, id)
		case age > loginTTL:
			total++ // an expired login counts, and goes first when the table is full
		case old.userID == "":
			pending[old.from] = append(pending[old.from], old)
			total++
		default:
			total++
		}
	}
	// The address's own quota: its oldest pending logins give way.
	if mine := pending[x.from]; len(mine) >= l.perAddr {
		sortByArrival(mine)
		for _, old := range mine[:len(mine)-l.perAddr+1] {
			delete(l.m, old.id)
			total--
		}
		pending[x.from] = mine[len(mine)-l.perAddr+1:]
	}
	for total >= l.max && l.displaceOne(pending, now) {
		total--
	}
	l.m[x.id] = x
	return nil
}

// displaceOne removes the oldest expired login, else the oldest pending login of the address
// with the most pending logins. It reports false when nothing may be removed.
func (l *logins) displaceOne(pending map[string][]*login, now time.Time) bool {
	var oldest *login
	for _, x := range l.m {
		if now.Sub(x.created) > loginTTL && (oldest == nil || x.seq < oldest.seq) {
			oldest = x
		}
	}
	if oldest != nil {
		delete(l.m, oldest.id)
		return true
	}
	busiest := ""
	for addr, xs := range pending {
		if len(xs) > len(pending[busiest]) {
			busiest = addr
		}
	}
	xs := pending[busiest]
	if len(xs) == 0 {
		return false
	}
	sortByArrival(xs)
	delete(l.m, xs[0].id)
	pending[busiest] = xs[1:]
	return true
}

func sortByArrival(xs []*login) {
	slices.SortFunc(xs, func(a, b *login) int { return cmp.Compare(a.seq, b.seq) })
}

// lookup returns a copy of a login, so handlers never share mutable state, and whether it is
// still live. ok is false when the login is unknown (never started, answered, or long gone).
func (l *logins) lookup(id string, now time.Time) (x login, live, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.m[id]
	if !ok {
		return login{}, false, false
	}
	return *p, now.Sub(p.created) <= loginTTL, true
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
