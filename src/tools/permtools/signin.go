package permtools

import "github.com/hamcp/hamcp/src/authn"

// SignIn says how a caller signed in, for the user reading the panel: which client, as which Home
// Assistant user, or which SSH key. It names credentials, never shows one.
func SignIn(p *authn.Principal) string {
	if p == nil {
		return ""
	}
	// A user id alone (32 hex digits) tells the reader nothing: only a name is shown.
	user := p.UserName
	as := ""
	if user != "" {
		as = " as " + user
	}
	switch p.Kind {
	case authn.KindOAuth:
		client := p.ClientName
		if client == "" {
			client = p.ClientID
		}
		return "OAuth sign-in of " + client + as
	case authn.KindHAToken:
		return "Home Assistant token" + as
	case authn.KindSSH:
		if p.KeyComment != "" {
			return "SSH key " + p.KeyComment
		}
		return "SSH key " + p.KeyFingerprint
	case authn.KindStdio:
		return "stdio (the process that started hamcp)"
	case authn.KindIngress:
		return "Home Assistant panel" + as
	}
	return "token" + as
}
