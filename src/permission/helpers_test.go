package permission

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/store"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// inbox is where the user reads notifications: it keeps what the Manager posts and what it takes down.
type inbox struct {
	mu        sync.Mutex
	posted    []Pending
	withdrawn map[string]int
	fail      error // Notify fails with this when set
}

func (b *inbox) Notify(ctx context.Context, p Pending) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	b.posted = append(b.posted, p)
	return nil
}

func (b *inbox) Withdraw(ctx context.Context, p Pending) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.withdrawn == nil {
		b.withdrawn = map[string]int{}
	}
	b.withdrawn[p.ID]++
	return nil
}

func (b *inbox) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.posted)
}

// link is the approval link the user finds in the notification for a request.
func (b *inbox) link(t *testing.T, requestID string) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.posted {
		if p.ID == requestID {
			return p.Link
		}
	}
	t.Fatalf("no notification was posted for request %s", requestID)
	return ""
}

// linkBase stands in for the approval page: the manager's links point there.
const linkBase = "https://hamcp.example/approve?r="

// secretOf takes the link secret out of an approval link, as the page does with its query.
func secretOf(t testing.TB, link string) string {
	t.Helper()
	s, ok := strings.CutPrefix(link, linkBase)
	if !ok || s == "" {
		t.Fatalf("%q is not an approval link", link)
	}
	return s
}

// admin is the user answering on the approval page after logging in to Home Assistant.
var admin = Approver{Via: ViaPage, UserID: "u-alex", Name: "Alex"}

func (b *inbox) wasWithdrawn(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.withdrawn[id] > 0
}

type fixture struct {
	m     *Manager
	clock *fakeclock.Clock
	inbox *inbox
	store *store.Store
	path  string
}

// newFixture builds a Manager on a real SQLite file with the user's inbox as Notifier.
func newFixture(t testing.TB, o Options) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{clock: fakeclock.New(t0), inbox: &inbox{}, store: st, path: path}
	o.Store, o.Notifier, o.Clock = st, f.inbox, f.clock.Now
	if o.Link == nil {
		o.Link = func(secret string) string { return linkBase + secret }
	}
	if f.m, err = New(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.m.Close()
		st.Close()
	})
	return f
}

// auditLog reads the audit log after closing the Manager, which writes everything queued; the fixture
// is done with it afterwards.
func (f *fixture) auditLog(t *testing.T, q store.AuditQuery) []store.AuditEntry {
	t.Helper()
	f.m.Close()
	got, _, err := f.store.ListAudit(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func req(session string, c Category) Request {
	return Request{SessionKey: session, Client: "claude-code/1.0", Tool: toolFor[c], Category: c, ArgsSummary: "path=/config/configuration.yaml"}
}

var toolFor = map[Category]string{
	Filesystem: "ha_write_file", Database: "ha_execute_sql", Command: "ha_execute_command", HubAdmin: "hubitat_update_rule",
}

func asRequired(t *testing.T, err error) *RequiredError {
	t.Helper()
	var re *RequiredError
	if !errors.As(err, &re) {
		t.Fatalf("got %v (%T), want *RequiredError", err, err)
	}
	return re
}

func asDenied(t *testing.T, err error) *DeniedError {
	t.Helper()
	var de *DeniedError
	if !errors.As(err, &de) {
		t.Fatalf("got %v (%T), want *DeniedError", err, err)
	}
	return de
}

func accept(context.Context, string) (bool, error)  { return true, nil }
func decline(context.Context, string) (bool, error) { return false, nil }
