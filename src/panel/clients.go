package panel

import (
	"errors"
	"net/http"

	"github.com/hamcp/hamcp/src/oauth"
)

// ---- Clients & tokens ----

type clientsData struct {
	OAuth   bool
	Grants  []oauth.GrantInfo
	Clients []oauth.ClientInfo
	SSHKeys []SSHKey
}

func (p *Panel) clientsPage(w http.ResponseWriter, r *http.Request) {
	srv := p.o.OAuth()
	d := clientsData{OAuth: srv != nil, SSHKeys: p.o.SSHKeys()}
	if srv != nil {
		var err error
		if d.Grants, err = srv.Grants(r.Context()); err == nil {
			d.Clients, err = srv.Clients(r.Context())
		}
		if err != nil {
			p.log.Error("panel: list OAuth clients", "err", err)
			p.failed(w, r, "hamcp's store could not be read")
			return
		}
	}
	p.render(w, r, "clients", "Clients", d)
}

func (p *Panel) revokeOAuth(w http.ResponseWriter, r *http.Request) {
	u, ok := p.checkPost(w, r)
	if !ok {
		return
	}
	srv := p.o.OAuth()
	if srv == nil {
		done(w, r, "clients", "oauth-disabled")
		return
	}
	g, err := srv.RevokeGrant(r.Context(), r.PostForm.Get("grant"))
	switch {
	case errors.Is(err, oauth.ErrUnknownGrant):
		done(w, r, "clients", "grant-gone")
	case err != nil:
		p.log.Error("panel: revoke an OAuth grant", "err", err)
		p.failed(w, r, "the sign-in could not be revoked")
	default:
		p.o.Permissions.RecordPanelAction("oauth", g.ClientName+" "+g.ClientID,
			"OAuth sign-in of "+g.UserName+" revoked by "+p.approver(u).String())
		done(w, r, "clients", "oauth-revoked")
	}
}
