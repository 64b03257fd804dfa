package panel

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
)

// Home Assistant lets every user open an add-on's ingress panel, administrators or not, so the
// sidebar proves only that someone logged in. The panel answers permission requests (unlock a door,
// restart), so each request's user is looked up in Home Assistant's own user list and only an active
// administrator is served. The list is read with hamcp's own access and cached briefly; nothing the
// model can write reaches the cache.

const (
	// usersTTL is how long a read of the user list is believed: a demoted or deactivated
	// administrator keeps the panel at most this long.
	usersTTL = 30 * time.Second
	// usersRetry is the least time between reads when a user is not allowed: a just-promoted
	// administrator gets in on their next click, and a refused user reloading cannot make the panel
	// ask Home Assistant more often than this.
	usersRetry = 2 * time.Second
	// usersTimeout bounds one read of the list.
	usersTimeout = 10 * time.Second
)

// standing is why a user may or may not use the panel.
type standing int

const (
	standingAdmin standing = iota
	standingUnknown
	standingInactive
	standingSystem
	standingNotAdmin
)

func standingOf(u homeassistant.AuthUser) standing {
	switch {
	case !u.IsActive:
		return standingInactive
	case u.SystemGenerated:
		return standingSystem
	case !u.IsAdmin():
		return standingNotAdmin
	}
	return standingAdmin
}

// errUsersUnavailable is a failed read of the user list; the panel then refuses everyone.
var errUsersUnavailable = errors.New("the user list of Home Assistant could not be read")

// admins is the cached user list.
type admins struct {
	list func(ctx context.Context) ([]homeassistant.AuthUser, error)
	now  func() time.Time

	fetch sync.Mutex // one read of the list at a time; the others wait for its answer

	mu      sync.Mutex
	users   map[string]homeassistant.AuthUser
	fetched time.Time // zero: never read
}

// check says where the user with this id stands, reading the list again when the cache is old or
// does not admit the user and was read more than usersRetry ago.
func (a *admins) check(ctx context.Context, id string) (standing, homeassistant.AuthUser, error) {
	if id == "" {
		return standingUnknown, homeassistant.AuthUser{}, nil
	}
	s, u, at, fresh := a.cached(id)
	if fresh && (s == standingAdmin || a.now().Sub(at) < usersRetry) {
		return s, u, nil
	}
	if err := a.refresh(ctx, at); err != nil {
		return 0, homeassistant.AuthUser{}, err
	}
	s, u, _, _ = a.cached(id)
	return s, u, nil
}

// cached looks id up in the last read: its standing, when that read was, and whether it is fresh.
func (a *admins) cached(id string) (standing, homeassistant.AuthUser, time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fresh := !a.fetched.IsZero() && a.now().Sub(a.fetched) < usersTTL
	u, ok := a.users[id]
	if !ok {
		return standingUnknown, u, a.fetched, fresh
	}
	return standingOf(u), u, a.fetched, fresh
}

// refresh reads the list unless another request read it after seen, the read this one found
// wanting. A failed read also forgets the old list: the panel fails closed.
func (a *admins) refresh(ctx context.Context, seen time.Time) error {
	a.fetch.Lock()
	defer a.fetch.Unlock()
	a.mu.Lock()
	newer := a.fetched.After(seen)
	a.mu.Unlock()
	if newer {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, usersTimeout)
	defer cancel()
	list, err := a.list(ctx)
	if err == nil && len(list) == 0 {
		err = errors.New("the list was empty")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.users, a.fetched = nil, time.Time{}
		return errors.Join(errUsersUnavailable, err)
	}
	a.users = make(map[string]homeassistant.AuthUser, len(list))
	for _, u := range list {
		a.users[u.ID] = u
	}
	a.fetched = a.now()
	return nil
}

// refusal is the page a visitor the panel does not serve gets.
type refusal struct {
	Status   int
	Headline string
	Why      string
	Todo     string
}

func refusalFor(s standing, u User, hu homeassistant.AuthUser) refusal {
	who := u.Label()
	if hu.Name != "" {
		who = hu.Name
	}
	r := refusal{Status: http.StatusForbidden, Headline: "Only Home Assistant administrators can use the hamcp panel",
		Todo: "Ask an administrator of this Home Assistant to answer the request, or to make your account an administrator (Settings → People → Users)."}
	switch s {
	case standingUnknown:
		if u.ID == "" {
			r.Why = "Home Assistant did not say who opened the panel."
			r.Todo = "Open the hamcp panel from Home Assistant's sidebar, signed in as an administrator."
		} else {
			r.Why = "Home Assistant does not list the user who opened the panel (" + who + ")."
		}
	case standingInactive:
		r.Why = "The Home Assistant user " + who + " is deactivated."
		r.Todo = "Ask an administrator of this Home Assistant to reactivate the account (Settings → People → Users)."
	case standingSystem:
		r.Why = "The Home Assistant user " + who + " is a system user, not a person."
		r.Todo = "Open the hamcp panel from Home Assistant's sidebar, signed in as an administrator."
	case standingNotAdmin:
		r.Why = "The Home Assistant user " + who + " is not an administrator."
	}
	return r
}

// unavailable is the page everyone gets while the user list cannot be read.
var unavailable = refusal{Status: http.StatusServiceUnavailable, Headline: "hamcp could not ask Home Assistant who you are",
	Why:  "The panel admits only Home Assistant administrators, and Home Assistant's user list could not be read just now.",
	Todo: "Check that Home Assistant is running (the add-on's log says more), then reload this page."}

// admit serves the request only for an active Home Assistant administrator, and answers every
// other visitor with the refusal page.
func (p *Panel) admit(w http.ResponseWriter, r *http.Request) bool {
	u, _ := p.user(r)
	s, hu, err := p.admins.check(r.Context(), u.ID)
	if err != nil {
		p.log.Warn("panel: refused, Home Assistant's user list could not be read", "err", err)
		w.Header().Set("Retry-After", "5")
		p.refuse(w, r, unavailable)
		return false
	}
	if s != standingAdmin {
		rf := refusalFor(s, u, hu)
		p.log.Warn("panel: refused a visitor who is not an active Home Assistant administrator", "user", u.ID, "why", rf.Why)
		p.refuse(w, r, rf)
		return false
	}
	return true
}

func (p *Panel) refuse(w http.ResponseWriter, r *http.Request, rf refusal) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(rf.Status)
	if err := refusalPage().Execute(w, struct {
		Base string
		refusal
	}{base(r), rf}); err != nil {
		p.log.Error("panel: render the refusal page", "err", err)
	}
}
