package panel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/hamcp/hamcp/src/permission"
)

// ---- Approvals ----

type approvalsData struct {
	Pending  []pendingView
	Sessions []permission.SessionGrants
	Policies []permission.CategoryStatus
	Version  string
}

// pendingView is a waiting request as the card shows it: what kind of yes it asks for, and its
// arguments with entity names.
type pendingView struct {
	permission.Pending
	Once    bool // a confirmation of this one action, not a permission for the session
	Summary string
}

func (p *Panel) approvalsData() approvalsData {
	d := approvalsData{Sessions: p.o.Permissions.SessionGrants(), Policies: p.o.Permissions.Policies()}
	for _, q := range p.o.Permissions.Pending() {
		d.Pending = append(d.Pending, pendingView{Pending: q, Once: q.Category == permission.ConfirmKind,
			Summary: permission.NameEntities(redact(q.ArgsSummary), p.o.EntityName)})
	}
	// The version changes whenever what the live sections show changes, so the page redraws only then.
	h := sha256.New()
	for _, q := range d.Pending {
		fmt.Fprintf(h, "p%s\x00", q.ID)
	}
	for _, s := range d.Sessions {
		for _, g := range s.Grants {
			fmt.Fprintf(h, "g%s\x00%s\x00%d\x00", s.Session, g.Category, g.ExpiresAt.UnixNano())
		}
		for _, g := range s.Denied {
			fmt.Fprintf(h, "d%s\x00%s\x00", s.Session, g.Category)
		}
	}
	d.Version = hex.EncodeToString(h.Sum(nil)[:8])
	return d
}

func (p *Panel) approvalsPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, "approvals", "Approvals", p.approvalsData())
}

// approvalsLive is what open pages poll: the count for the tab badge and, when the version moved, the
// redrawn pending and grants sections.
func (p *Panel) approvalsLive(w http.ResponseWriter, r *http.Request) {
	d := p.approvalsData()
	out := map[string]any{"version": d.Version, "count": len(d.Pending)}
	if r.URL.Query().Get("v") != d.Version {
		v := p.view(r, d)
		for _, part := range []string{"pending", "grants"} {
			var buf bytes.Buffer
			if err := pages()["approvals"].ExecuteTemplate(&buf, part, v); err != nil {
				p.log.Error("panel: render", "part", part, "err", err)
				// The live poll is read by panel.js, not shown: a status is all it needs.
				http.Error(w, "500 internal error", http.StatusInternalServerError)
				return
			}
			out[part] = buf.String()
		}
	}
	writeJSON(w, out)
}

func (p *Panel) answer(w http.ResponseWriter, r *http.Request) {
	u, ok := p.checkPost(w, r)
	if !ok {
		return
	}
	id, answer := r.PathValue("id"), r.PathValue("answer")
	req, _ := p.o.Permissions.PendingByID(id) // its kind words the answer; a gone one ends as "gone"
	var err error
	switch answer {
	case "approve":
		err = p.o.Permissions.Approve(r.Context(), id, p.approver(u))
	case "deny":
		err = p.o.Permissions.Deny(r.Context(), id, p.approver(u))
	default:
		p.notFound(w, r)
		return
	}
	switch {
	case errors.Is(err, permission.ErrUnknownRequest), errors.Is(err, permission.ErrRequestExpired):
		done(w, r, "approvals", "gone")
	case err != nil:
		p.log.Error("panel: answer a request", "request", id, "err", err)
		p.failed(w, r, "the answer could not be recorded")
	default:
		p.log.Info("panel: request answered", "request", id, "answer", answer, "user", u.ID)
		done(w, r, "approvals", map[string]string{"approve": "approved", "deny": "denied"}[answer]+"&kind="+url.QueryEscape(string(req.Category)))
	}
}

func (p *Panel) revokeGrant(w http.ResponseWriter, r *http.Request) {
	u, ok := p.checkPost(w, r)
	if !ok {
		return
	}
	c, err := permission.ParseCategory(r.PostForm.Get("category"))
	if err != nil {
		p.badRequest(w, r, err.Error())
		return
	}
	err = p.o.Permissions.RevokeGrant(r.PostForm.Get("session"), c, p.approver(u))
	switch {
	case errors.Is(err, permission.ErrUnknownGrant):
		done(w, r, "approvals", "grant-gone")
	case err != nil:
		p.log.Error("panel: revoke a grant", "err", err)
		p.failed(w, r, "the grant could not be revoked")
	default:
		done(w, r, "approvals", "revoked")
	}
}
