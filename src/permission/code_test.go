package permission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/hamcp/hamcp/src/store"
)

func TestNewCodeIsSixRandomDigits(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c, err := newCode()
		if err != nil {
			t.Fatal(err)
		}
		if len(c) != codeDigits || strings.IndexFunc(c, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0 {
			t.Fatalf("code %q is not %d digits", c, codeDigits)
		}
		seen[c] = true
	}
	// 200 draws from a million: a repeat or two is possible, a handful means the source is not random.
	if len(seen) < 195 {
		t.Fatalf("only %d distinct codes in 200", len(seen))
	}
}

func TestCodeMatches(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
	}{
		{"048213", "048213", true},
		{"048213", "048 213", true},
		{"048213", "048-213", true},
		{"048213", " 0 4 8 2 1 3 ", true},
		{"048213", "48213", false},
		{"048213", "0482130", false},
		{"048213", "048214", false},
		{"048213", "", false},
		{"048213", "04821３", false}, // full-width digit
		{"048213", "048213\x00", false},
		{"048213", "code 048213", false},
		{"", "", false},
		{"12345", "12345", false}, // a malformed stored code never matches
	}
	for _, tc := range tests {
		if got := codeMatches(tc.want, tc.got); got != tc.ok {
			t.Errorf("codeMatches(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}

func FuzzCodeMatches(f *testing.F) {
	for _, s := range []string{"048213", "048 213", "", "0482130", "ab", "１２３４５６", strings.Repeat("1", 100)} {
		f.Add(uint32(48213), s)
	}
	f.Fuzz(func(t *testing.T, n uint32, got string) {
		want := fmt.Sprintf("%06d", n%1_000_000)
		ok := codeMatches(want, got)
		digits := strings.Map(func(r rune) rune {
			if r == ' ' || r == '-' || r == '\t' {
				return -1
			}
			return r
		}, got)
		// Accepted exactly when, separators aside, the input is the code itself.
		if ok != (digits == want) {
			t.Fatalf("codeMatches(%q, %q) = %v, but without separators the input is %q", want, got, ok, digits)
		}
		if norm := normalizeCode(got); norm != "" && (len(norm) != codeDigits || strings.Trim(norm, "0123456789") != "") {
			t.Fatalf("normalizeCode(%q) = %q, not %d digits", got, norm, codeDigits)
		}
	})
}

func TestWrongCodesCancelTheRequest(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	first := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	requestID := first.RequestID
	used := 0 // wrong codes already counted against the current request
	for strike := 1; strike <= maxStrikes; strike++ {
		code := f.inbox.code(t, requestID)
		wrong := req("s1", Filesystem)
		wrong.Code = fmt.Sprintf("%06d", (atoi(code)+1)%1_000_000)
		for try := used + 1; try < MaxCodeAttempts; try++ {
			re := asRequired(t, f.m.Authorize(ctx, wrong))
			if re.RequestID != requestID || !strings.Contains(re.Detail, fmt.Sprintf("%d tries left", MaxCodeAttempts-try)) {
				t.Fatalf("strike %d, wrong code %d: %+v", strike, try, re)
			}
		}
		last := f.m.Authorize(ctx, wrong)
		if strike == maxStrikes {
			de := asDenied(t, last)
			if !strings.Contains(de.Error(), "too many wrong one-time codes") {
				t.Fatalf("after %d cancelled requests: %v", maxStrikes, de)
			}
			// The real code of the cancelled request is useless now, and so is asking again.
			right := req("s1", Filesystem)
			right.Code = code
			asDenied(t, f.m.Authorize(ctx, right))
			break
		}
		re := asRequired(t, last)
		if re.RequestID == requestID || !strings.Contains(re.Detail, "cancelled") {
			t.Fatalf("wrong code %d should cancel the request and make a new one: %+v", MaxCodeAttempts, re)
		}
		if f.inbox.count() != strike+1 {
			t.Fatalf("%d notifications after %d cancelled requests, want %d", f.inbox.count(), strike, strike+1)
		}
		// The cancelled request's code no longer works (and counts as a wrong code for the new one).
		stale := req("s1", Filesystem)
		stale.Code = code
		if re := asRequired(t, f.m.Authorize(ctx, stale)); re.RequestID == requestID {
			t.Fatal("the cancelled request came back")
		}
		requestID, used = re.RequestID, 1
	}
	log := f.auditLog(t, store.AuditQuery{SessionID: "s1", Outcome: store.OutcomeCodeRejected})
	if len(log) == 0 {
		t.Fatal("wrong codes were not audited")
	}
	for _, e := range log {
		for _, p := range f.inbox.posted {
			if strings.Contains(e.Detail, p.Code) || strings.Contains(e.ArgsSummary, p.Code) {
				t.Fatalf("audit entry %+v contains a code", e)
			}
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestCodeIsSingleUseAndExpires(t *testing.T) {
	ctx := context.Background()
	t.Run("single use", func(t *testing.T) {
		f := newFixture(t, Options{})
		re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
		r := req("s1", Filesystem)
		r.Code = f.inbox.code(t, re.RequestID)
		if err := f.m.Authorize(ctx, r); err != nil {
			t.Fatal(err)
		}
		// The session ends and the same key asks again: the used code must not work a second time.
		f.m.EndSession("s1")
		again := asRequired(t, f.m.Authorize(ctx, r))
		if again.RequestID == re.RequestID || !strings.Contains(again.Detail, "not valid") {
			t.Fatalf("reused code: %+v", again)
		}
	})
	t.Run("expires after CodeTTL", func(t *testing.T) {
		f := newFixture(t, Options{CodeTTL: 5 * time.Minute})
		re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
		code := f.inbox.code(t, re.RequestID)
		f.clock.Advance(5 * time.Minute)
		if p := f.m.Pending(); len(p) != 0 {
			t.Fatalf("expired request still listed: %+v", p)
		}
		r := req("s1", Filesystem)
		r.Code = code
		next := asRequired(t, f.m.Authorize(ctx, r))
		if next.RequestID == re.RequestID || f.inbox.count() != 2 {
			t.Fatalf("expired code: %+v, %d notifications; want a new request and notification", next, f.inbox.count())
		}
		eventually(t, "the expired notification to be withdrawn", func() bool { return f.inbox.wasWithdrawn(re.RequestID) })
	})
	t.Run("approving an expired request", func(t *testing.T) {
		f := newFixture(t, Options{})
		re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
		f.clock.Advance(10 * time.Minute)
		if err := f.m.Approve(ctx, re.RequestID); !errors.Is(err, ErrRequestExpired) {
			t.Fatalf("Approve after expiry: %v, want ErrRequestExpired", err)
		}
		asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	})
}

func TestRefusalsNeverCarryTheCode(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{CodeArgument: "user_code"})
	for i, c := range AllCategories {
		session := fmt.Sprint("s", i)
		re := asRequired(t, f.m.Authorize(ctx, req(session, c)))
		wrong := req(session, c)
		wrong.Code = "000000"
		errs := []error{re, f.m.Authorize(ctx, req(session, c)), f.m.Authorize(ctx, wrong)}
		code := f.inbox.code(t, re.RequestID)
		if code == "000000" {
			continue // one in a million; the wrong code was right
		}
		for _, err := range errs {
			text := err.Error()
			if strings.Contains(text, code) {
				t.Fatalf("refusal text contains the code %s: %s", code, text)
			}
			for _, want := range []string{"permission_required", string(c), re.RequestID, f.m.Warning(c), "user_code", NotificationTitle} {
				if !strings.Contains(text, want) {
					t.Errorf("refusal lacks %q: %s", want, text)
				}
			}
		}
		for _, st := range f.m.Status(session) {
			if strings.Contains(fmt.Sprintf("%+v", st), code) {
				t.Fatalf("Status carries the code: %+v", st)
			}
		}
	}
}

func TestParseCategory(t *testing.T) {
	tests := []struct {
		in   string
		want Category
		err  string
	}{
		{"filesystem", Filesystem, ""},
		{" Database ", Database, ""},
		{"COMMAND", Command, ""},
		{"hub_admin", HubAdmin, ""},
		{"hub-admin", "", `unknown permission category "hub-admin": use one of filesystem, database, command, hub_admin`},
		{"", "", "unknown permission category"},
		{"files", "", "unknown permission category"},
	}
	for _, tc := range tests {
		got, err := ParseCategory(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("ParseCategory(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseCategory(%q) error %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in   string
		want Policy
		err  string
	}{
		{"ask", PolicyAsk, ""},
		{" Allow", PolicyAllow, ""},
		{"DENY\n", PolicyDeny, ""},
		{"", "", "permission policy is empty: use ask (the default), allow or deny"},
		{"yes", "", `unknown permission policy "yes": use ask, allow or deny`},
	}
	for _, tc := range tests {
		got, err := ParsePolicy(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParsePolicy(%q) error %v, want %q", tc.in, err, tc.err)
		}
	}
}

func FuzzParseCategory(f *testing.F) {
	for _, s := range []string{"filesystem", "HUB_ADMIN", " database ", "", "\xff", "command\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCategory(s)
		if err != nil {
			if c != "" || !strings.Contains(err.Error(), "use one of") {
				t.Fatalf("ParseCategory(%q) = %q, %v", s, c, err)
			}
			return
		}
		if !c.valid() || !strings.EqualFold(strings.TrimSpace(s), string(c)) {
			t.Fatalf("ParseCategory(%q) = %q", s, c)
		}
		if again, err := ParseCategory(string(c)); err != nil || again != c {
			t.Fatalf("round trip of %q: %q, %v", c, again, err)
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"ask", "ALLOW", " deny ", "", "\xff", "allow\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			if p != "" || !strings.Contains(err.Error(), "ask") {
				t.Fatalf("ParsePolicy(%q) = %q, %v", s, p, err)
			}
			return
		}
		if (p != PolicyAsk && p != PolicyAllow && p != PolicyDeny) || !strings.EqualFold(strings.TrimSpace(s), string(p)) {
			t.Fatalf("ParsePolicy(%q) = %q", s, p)
		}
	})
}
