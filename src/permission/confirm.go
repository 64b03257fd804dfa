package permission

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// ConfirmKind is the Category shown on a request to confirm one action (unlock a door, restart Home
// Assistant). It is not a permission: nothing is granted to the session. An approval lets that one
// call, with exactly the same arguments, run once.
const ConfirmKind Category = "confirm"

// maxActionsPerSession bounds the confirmation requests one session may keep open, so a model cannot
// flood the panel.
const maxActionsPerSession = 8

// Action is one tool call waiting for the user's confirmation.
type Action struct {
	SessionKey  string
	Client      string
	Tool        string
	Owner       string
	SignIn      string // as in Request
	Question    string // shown to the user as is, e.g. "Unlock lock.front_door (Front Door)?"
	ArgsSummary string
	// Key identifies the exact call (tool and arguments). Only a retry with the same key uses the
	// approval.
	Key string
	// OpenURL and URLDone: as in Request, to show the approval page in the client and wait.
	OpenURL func(ctx context.Context, message, url, elicitationID string) (accepted bool, err error)
	URLDone func(ctx context.Context, elicitationID string)
}

// actionState is what the user said about one action, under Manager.mu.
type actionState struct {
	req      *pendingReq // while pending
	approved bool
	denied   string
	until    time.Time // an approval is used within this time or lost
}

type actionBook map[string]map[[32]byte]*actionState // session key → hash of Action.Key

// ConfirmRequiredError means the user has not confirmed the action yet. Its text tells the model what
// the user must do.
type ConfirmRequiredError struct {
	RequestID string
	Question  string
	Link      string
	HowTo     string
	Detail    string
}

func (e *ConfirmRequiredError) Error() string {
	msg := "confirmation_required: " + e.Question + " Only the user can confirm this; confirm=true from you is not enough."
	if e.Detail != "" {
		msg += " " + e.Detail
	}
	return msg + " What to do: " + e.HowTo + " Request id: " + e.RequestID + "."
}

// ConfirmDeniedError means the user refused this action.
type ConfirmDeniedError struct{ Question, Reason string }

func (e *ConfirmDeniedError) Error() string {
	return "confirmation_denied: " + e.Question + " The user refused it (" + e.Reason + "). Nothing was done; do not retry it."
}

// ConfirmAction lets the call go ahead (nil) when the user approved this exact action, using the
// approval up; otherwise it posts a request the user answers on the approval page or in the panel
// (opening the page in the client and waiting when it can), and returns *ConfirmRequiredError or
// *ConfirmDeniedError.
func (m *Manager) ConfirmAction(ctx context.Context, a Action) error {
	if a.SessionKey == "" || a.Key == "" || a.Question == "" {
		return fmt.Errorf("permission: ConfirmAction needs a session key, a call key and a question")
	}
	h := sha256.Sum256([]byte(a.Key))
	r := Request{SessionKey: a.SessionKey, Client: a.Client, Tool: a.Tool, Category: ConfirmKind, ArgsSummary: a.ArgsSummary, Owner: a.Owner, SignIn: a.SignIn}
	m.mu.Lock()
	now := m.clock()
	st := m.actionLocked(a.SessionKey, h, now)
	switch {
	case st.approved:
		delete(m.actions[a.SessionKey], h)
		m.mu.Unlock()
		return nil
	case st.denied != "":
		m.mu.Unlock()
		return &ConfirmDeniedError{Question: a.Question, Reason: st.denied}
	}
	p, fresh := st.req, false
	if p == nil {
		if m.waitingLocked(a.SessionKey) >= maxActionsPerSession {
			delete(m.actions[a.SessionKey], h)
			m.mu.Unlock()
			return &ConfirmRequiredError{Question: a.Question, RequestID: "none",
				HowTo:  "ask the user to answer the requests already waiting in the hamcp panel first, then retry.",
				Detail: fmt.Sprintf("This session already has %d confirmations waiting.", maxActionsPerSession)}
		}
		var err error
		if p, err = m.newActionLocked(r, a, now); err != nil {
			m.mu.Unlock()
			return err
		}
		st.req, fresh = p, true
	}
	ask := a.OpenURL != nil && p.Link != "" && !p.urlAsked
	if ask {
		p.urlAsked = true
	}
	m.mu.Unlock()
	if fresh {
		m.notify(ctx, p)
		m.record(r, store.OutcomeConfirmationRequired, "request "+p.ID+" posted for the user to confirm this one action", now)
	}
	if ask {
		accepted, err := a.OpenURL(ctx, "The assistant wants to do this: "+a.Question+" Open hamcp's approval page, log in to Home "+
			"Assistant as an administrator, and approve or deny it there.", p.Link, p.ID)
		if err == nil && accepted {
			if err := m.waitAction(ctx, p); err != nil {
				return err
			}
			if a.URLDone != nil {
				a.URLDone(context.WithoutCancel(ctx), p.ID)
			}
			return m.ConfirmAction(ctx, Action{SessionKey: a.SessionKey, Client: a.Client, Tool: a.Tool, Owner: a.Owner, SignIn: a.SignIn,
				Question: a.Question, ArgsSummary: a.ArgsSummary, Key: a.Key}) // the answer, without asking again
		}
		m.clearURLAsked(p)
	}
	return &ConfirmRequiredError{RequestID: p.ID, Question: a.Question, Link: p.Link, HowTo: m.actionHowTo(p)}
}

// waitAction waits for the user's answer to request p (a permission or a confirmation), its expiry, or
// the call's end.
func (m *Manager) waitAction(ctx context.Context, p *pendingReq) error {
	wait := time.NewTimer(p.ExpiresAt.Sub(m.clock()))
	defer wait.Stop()
	select {
	case <-p.done:
	case <-wait.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (m *Manager) actionLocked(key string, h [32]byte, now time.Time) *actionState {
	if m.actions == nil {
		m.actions = actionBook{}
	}
	book := m.actions[key]
	if book == nil {
		book = map[[32]byte]*actionState{}
		m.actions[key] = book
	}
	for k, st := range book { // forget what ran out
		switch {
		case st.req != nil && !now.Before(st.req.ExpiresAt):
			m.dropPendingLocked(nil, st.req)
			delete(book, k)
		case st.approved && !now.Before(st.until):
			delete(book, k)
		}
	}
	st := book[h]
	if st == nil {
		st = &actionState{}
		book[h] = st
	}
	return st
}

func (m *Manager) newActionLocked(r Request, a Action, now time.Time) (*pendingReq, error) {
	s := m.sessionLocked(a.SessionKey, now)
	s.saw(Request{Client: a.Client, SignIn: a.SignIn})
	p, err := m.newPendingLocked(r, s, now)
	if err != nil {
		return nil, err
	}
	delete(s.pending, ConfirmKind) // confirmations live in the action book, one per call
	p.Warning = a.Question + " Approving lets this one call run once; it grants nothing else."
	p.action = &a.Key
	return p, nil
}

// answerActionLocked records the user's answer to a confirmation request. Called by answer with
// Manager.mu held; it unlocks.
func (m *Manager) answerActionLocked(p *pendingReq, approve bool, by Approver, now time.Time) error {
	book := m.actions[p.SessionKey]
	st := book[sha256.Sum256([]byte(*p.action))]
	r := Request{SessionKey: p.SessionKey, Client: p.Client, Tool: p.Tool, Category: ConfirmKind, ArgsSummary: p.ArgsSummary}
	if st == nil || st.req != p || !now.Before(p.ExpiresAt) {
		m.dropPendingLocked(nil, p)
		m.mu.Unlock()
		m.withdraw(p.Pending)
		return ErrRequestExpired
	}
	st.req = nil
	if approve {
		st.approved, st.until = true, now.Add(m.requestTTL)
	} else {
		st.denied = "denied by " + by.String() + " (request " + p.ID + ")"
	}
	m.dropPendingLocked(nil, p)
	m.mu.Unlock()
	m.withdraw(p.Pending)
	if approve {
		m.record(r, store.OutcomeConfirmedOnce, "request "+p.ID+" confirmed once by "+by.String()+": this one action may run once", now)
	} else {
		m.record(r, store.OutcomeConfirmationRefused, "request "+p.ID+" refused by "+by.String()+": this action did not run", now)
	}
	return nil
}

// waitingLocked counts the session's confirmation requests still waiting for the user.
func (m *Manager) waitingLocked(key string) int {
	n := 0
	for _, st := range m.actions[key] {
		if st.req != nil {
			n++
		}
	}
	return n
}

// dropActionsLocked forgets a session's confirmations, returning the requests to take down.
func (m *Manager) dropActionsLocked(key string) []Pending {
	var stale []Pending
	for _, st := range m.actions[key] {
		if st.req != nil {
			m.dropPendingLocked(nil, st.req)
			stale = append(stale, st.req.Pending)
		}
	}
	delete(m.actions, key)
	return stale
}

func (m *Manager) actionHowTo(p *pendingReq) string {
	until := p.ExpiresAt.UTC().Format("15:04")
	if p.Link != "" {
		return fmt.Sprintf("Tell the user what you want to do and why, and give them this link: %s — it opens hamcp's approval "+
			"page, where they log in to Home Assistant as an administrator and approve or deny request %s (before %s UTC; it is "+
			"also listed in the hamcp panel). When they say it is approved, repeat exactly the same call.", p.Link, p.ID, until)
	}
	return fmt.Sprintf("Tell the user what you want to do and why, and ask them to approve request %s in the hamcp panel in "+
		"Home Assistant's sidebar before %s UTC; then repeat exactly the same call.", p.ID, until)
}
