package permission

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The words for what an answer did live here, once, so the panel, the approval page and the
// notification never call a one-off confirmation a permission (design §5b): a confirmation lets one
// action run once; a grant lets a session use a category until it ends or expires.

// PendingByID returns the waiting request with that id, if it is still waiting.
func (m *Manager) PendingByID(id string) (Pending, bool) {
	now := m.clock()
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.requests[id]
	if !ok || !now.Before(p.ExpiresAt) {
		return Pending{}, false
	}
	return p.Pending, true
}

// Answered is the title and sentence shown to the user after they answered a request of category c.
func (m *Manager) Answered(c Category, approved bool) (title, text string) {
	switch {
	case c == ConfirmKind && approved:
		return "Approved once", "Approved once: that one action runs now (or when the assistant repeats the same call), " +
			"one time. It grants nothing else: the next such action asks you again."
	case c == ConfirmKind:
		return "Refused", "Refused: that action did not run, and the same action stays refused for the rest of that " +
			"session. Nothing else was granted or blocked."
	case approved:
		return "Approved: permission granted", "Granted: that session may use the " + string(c) + " permission for the rest of the " +
			"session, at most " + Rough(m.grantTTL) + ". Revoke it any time under Approvals → Granted in the hamcp panel."
	}
	return "Denied", "Denied: that session cannot use the " + string(c) + " permission for the rest of the " +
		"session. Nothing it asked for ran."
}

// GrantTTL is how long a granted category lasts at most.
func (m *Manager) GrantTTL() time.Duration { return m.grantTTL }

// Rough says a duration the way people do: "8 hours", "90 minutes", "1 day".
func Rough(d time.Duration) string {
	unit := func(n int, s string) string {
		if n == 1 {
			return "1 " + s
		}
		return strconv.Itoa(n) + " " + s + "s"
	}
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return unit(int(d/(24*time.Hour)), "day")
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int(d/time.Hour), "hour")
	case d >= time.Minute:
		return unit(int(d/time.Minute), "minute")
	}
	return unit(int(d/time.Second), "second")
}

// entityID is how Home Assistant writes an entity id: domain.object_id.
var entityID = regexp.MustCompile(`\b[a-z][a-z0-9_]*\.[a-z0-9_]+\b`)

// NameEntities writes each entity id in a summary as "Name (id)" when name knows it, so the user sees
// which door, not only lock.front_door. Rendering only: what is stored keeps the ids.
func NameEntities(summary string, name func(id string) string) string {
	if name == nil || summary == "" {
		return summary
	}
	return entityID.ReplaceAllStringFunc(summary, func(id string) string {
		if n := cleanName(name(id)); n != "" && n != id {
			return n + " (" + id + ")"
		}
		return id
	})
}

// maxName bounds a friendly name on a card.
const maxName = 60

// cleanName makes a friendly name safe to show beside its id. The name is text an assistant may have
// set (renaming an entity): control and bidirectional-override characters would let it reorder or
// hide the id that follows, so they go, and a long name is clipped.
func cleanName(n string) string {
	n = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\u200b', r == '\ufeff':
			return -1
		}
		return r
	}, n)
	n = strings.Join(strings.Fields(n), " ")
	if r := []rune(n); len(r) > maxName {
		n = string(r[:maxName-1]) + "…"
	}
	return n
}
