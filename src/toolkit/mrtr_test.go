package toolkit

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
)

func TestRequestStateBinding(t *testing.T) {
	t.Parallel()
	bind := func(tool, args, scope string) []byte {
		c := &Call{Tool: tool, SessionKey: scope}
		return c.binding(map[string]any{"name": args})
	}
	// bindAs is the same call made in one session with the token p's verifier issued.
	bindAs := func(p *authn.Principal) []byte {
		c := &Call{Tool: "ha_manage_shopping_list", SessionKey: "mcp:s1",
			req: &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: p.TokenInfo(time.Time{})}}}
		return c.binding(map[string]any{"name": "milk"})
	}
	haToken := &authn.Principal{Kind: authn.KindHAToken, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: authn.Fingerprint("t1")}
	full := &authn.Principal{Kind: authn.KindOAuth, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: "family-1"}
	readOnly := &authn.Principal{Kind: authn.KindOAuth, UserID: "u-1", Scopes: []string{authn.ScopeReadOnly}, GrantID: "family-1"}
	mine := bind("ha_manage_shopping_list", "milk", "token:a")
	st := roundState{ID: "n1", Exp: time.Now().Add(time.Minute).Unix(), Ask: questionID("Remove milk?", "Yes"), Answers: map[string]bool{"q0": true}}
	sealed := sealState(st, mine)
	payload, mac, _ := strings.Cut(sealed, ".")
	tests := []struct {
		name  string
		state string
		bind  []byte
		ok    bool
	}{
		{"the call it was issued for", sealed, mine, true},
		{"other arguments", sealed, bind("ha_manage_shopping_list", "bread", "token:a"), false},
		{"another tool", sealed, bind("ha_todo", "milk", "token:a"), false},
		{"another credential", sealed, bind("ha_manage_shopping_list", "milk", "token:b"), false},
		{"the session's own HA token", sealState(st, bindAs(haToken)), bindAs(haToken), true},
		{"another HA token of the same user in the session", sealState(st, bindAs(haToken)),
			bindAs(&authn.Principal{Kind: authn.KindHAToken, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: authn.Fingerprint("t2")}), false},
		{"an OAuth token of the same user in the session", sealState(st, bindAs(haToken)), bindAs(full), false},
		{"the same OAuth grant with other scopes", sealState(st, bindAs(full)), bindAs(readOnly), false},
		{"no token (stdio) for a token's state", sealState(st, bindAs(haToken)), bind("ha_manage_shopping_list", "milk", "mcp:s1"), false},
		// Length prefixes keep parts from sliding into each other.
		{"parts shifted", sealed, bind("ha_manage_shopping_list", "milk", "token:a\x00"), false},
		{"answers edited", sealState(roundState{ID: "n1", Exp: st.Exp, Ask: st.Ask, Answers: map[string]bool{"q0": true, "q1": true}}, mine)[:len(payload)+1] + mac, mine, false},
		{"no mac", payload, mine, false},
		{"empty", "", mine, false},
		{"garbage", "%%%.%%%", mine, false},
		{"too long", strings.Repeat("a", maxStateLen+1), mine, false},
		{"signed but empty payload", sealState(roundState{}, mine), mine, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := openState(tt.state, tt.bind)
			if (err == nil) != tt.ok {
				t.Fatalf("openState ok=%v, want %v (%v)", err == nil, tt.ok, err)
			}
			if tt.ok && (got.ID != st.ID || got.Ask != st.Ask || !got.Answers["q0"]) {
				t.Fatalf("payload %+v, want %+v", got, st)
			}
		})
	}
}

func TestSpentNoncesOnce(t *testing.T) {
	t.Parallel()
	s := &spentNonces{seen: map[string]time.Time{}}
	exp := time.Now().Add(time.Minute)
	if !s.use("a", exp) || s.use("a", exp) || !s.use("b", exp) {
		t.Fatal("a nonce must be usable exactly once")
	}
	// Expired entries are pruned once the set is large, live ones kept.
	for i := range 1100 {
		s.use(strings.Repeat("x", i+1), time.Now().Add(-time.Second))
	}
	if s.use("a", exp) {
		t.Fatal("a live nonce was forgotten while pruning")
	}
	if len(s.seen) > 1100 {
		t.Fatalf("expired nonces kept: %d", len(s.seen))
	}
}

func TestQuestionsAreDistinct(t *testing.T) {
	t.Parallel()
	if questionID("Remove milk?", "Yes") == questionID("Remove bread?", "Yes") ||
		questionID("Remove milk?", "Yes") == questionID("Remove milk?", "No") ||
		questionID("a\x00b", "c") == questionID("a", "b\x00c") {
		t.Fatal("two questions share an id")
	}
}

// FuzzOpenState: whatever a client sends as requestState, openState never panics and accepts only
// what sealState issued for the same binding.
func FuzzOpenState(f *testing.F) {
	bind := (&Call{Tool: "t", SessionKey: "token:a"}).binding(map[string]any{"x": 1.0})
	f.Add(sealState(roundState{ID: "n", Exp: 1, Ask: "q"}, bind))
	f.Add("")
	f.Add("a.b")
	f.Add("eyJpZCI6Im4ifQ.AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := openState(s, bind)
		if err != nil {
			return
		}
		if sealState(st, bind) == "" || st.ID == "" || st.Ask == "" {
			t.Fatalf("accepted %q as %+v", s, st)
		}
	})
}
