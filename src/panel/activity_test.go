package panel

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/hass"
	"github.com/hamcp/hamcp/src/store"
)

// fakeUndo stands in for the app's undoer: it answers by entry id and remembers what it was asked.
type fakeUndo struct {
	mu    sync.Mutex
	asked []string // "id by approved"
	plan  map[int64]func(approved string) (UndoResult, error)
}

func (f *fakeUndo) undo(ctx context.Context, id int64, by User, approved string) (UndoResult, error) {
	f.mu.Lock()
	f.asked = append(f.asked, strconv.FormatInt(id, 10)+" "+by.Label()+" "+approved)
	f.mu.Unlock()
	if p, ok := f.plan[id]; ok {
		return p(approved)
	}
	return UndoResult{}, errors.New("no such entry")
}

// activityFixture is a panel whose log holds one entry of each way an entry can be undone, or not.
func activityFixture(t *testing.T, undo *fakeUndo) (*fixture, map[string]int64) {
	t.Helper()
	o := Options{}
	if undo != nil {
		o.Undo = undo.undo
	}
	f := newFixture(t, o)
	ctx := context.Background()
	at := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	entries := []store.AuditEntry{
		{Tool: "ha_call_service", Kind: "device", Client: "claude-ai", Outcome: store.OutcomeOK, ArgsSummary: "light.turn_on [light.hallway]",
			Undo: `{"type":"state","ref":{},"note":"Undo puts light.hallway back as before light.turn_on."}`},
		{Tool: "ha_update_automation", Kind: "config", Client: "claude-ai", Outcome: store.OutcomeOK, Undo: `{"type":"config","ref":{}}`,
			UndoneAt: at.Add(time.Minute), UndoneBy: "Anna"},
		{Tool: "ha_call_service", Kind: "device", Client: "n8n", Outcome: store.OutcomeOK, ArgsSummary: "notify.send []",
			Undo: `{"note":"notify.send cannot be taken back"}`},
		{Tool: "ha_execute_command", Kind: "command", Client: "n8n", Outcome: store.OutcomeOK},
		{Tool: "ha_write_file", Kind: "file", Client: "n8n", Outcome: store.OutcomeError, Undo: `{"type":"file","ref":{}}`},
		{Tool: "ha_get_states", Client: "n8n", Outcome: store.OutcomeOK},
		{Tool: "ha_call_service", Kind: "device", Client: "claude-ai", Outcome: store.OutcomeOK, ArgsSummary: "cover.open_cover [cover.garage_door]",
			Undo: `{"type":"state","ref":{}}`},
	}
	names := []string{"light", "automation", "notify", "command", "failed", "read", "garage"}
	for i, e := range entries {
		e.Time = at.Add(time.Duration(i) * time.Second)
		if err := f.st.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]int64{}
	list, _, err := f.st.ListAudit(ctx, store.AuditQuery{Since: at, Until: at.Add(time.Duration(len(entries)) * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		ids[names[int(e.Time.Sub(at)/time.Second)]] = e.ID
	}
	return f, ids
}

// rowOf is the table row of entry id.
func rowOf(t *testing.T, body string, id int64) string {
	t.Helper()
	start := strings.Index(body, `data-id="`+strconv.FormatInt(id, 10)+`"`)
	if start < 0 {
		t.Fatalf("no row for entry %d", id)
	}
	end := strings.Index(body[start:], "</tr>")
	return body[start : start+end]
}

func TestActivityShowsWhatCanBeUndone(t *testing.T) {
	t.Parallel()
	f, ids := activityFixture(t, &fakeUndo{})
	body := f.do(call{method: http.MethodGet, path: "/activity", remote: supervisorPeer, header: alice}).Body.String()
	for _, tc := range []struct {
		entry     string
		button    bool
		want, not string
	}{
		{"light", true, "Undo puts light.hallway back", ""},
		{"garage", true, "", ""},
		{"automation", false, "undone by Anna at", "undo-button"},
		{"notify", false, "Cannot be undone: notify.send cannot be taken back", ""},
		{"command", false, "Cannot be undone: What a command did cannot be taken back.", ""},
		{"failed", false, "Nothing to undo: the call did not succeed.", ""},
		{"read", false, `<span class="chip kind">read</span>`, "Cannot be undone"},
	} {
		row := rowOf(t, body, ids[tc.entry])
		if got := strings.Contains(row, "undo-button"); got != tc.button {
			t.Errorf("%s: Undo button %v, want %v:\n%s", tc.entry, got, tc.button, row)
		}
		if tc.button && !strings.Contains(row, `action="/activity/`+strconv.FormatInt(ids[tc.entry], 10)+`/undo"`) {
			t.Errorf("%s: the button posts elsewhere:\n%s", tc.entry, row)
		}
		if tc.want != "" && !strings.Contains(row, tc.want) {
			t.Errorf("%s: row lacks %q:\n%s", tc.entry, tc.want, row)
		}
		if tc.not != "" && strings.Contains(row, tc.not) {
			t.Errorf("%s: row has %q:\n%s", tc.entry, tc.not, row)
		}
	}
	// Without an undoer nothing offers Undo.
	g, gids := activityFixture(t, nil)
	plain := g.do(call{method: http.MethodGet, path: "/activity", remote: supervisorPeer, header: alice}).Body.String()
	if strings.Contains(rowOf(t, plain, gids["light"]), "undo-button") {
		t.Error("Undo offered with no undoer")
	}
}

func TestActivityFilters(t *testing.T) {
	t.Parallel()
	f, _ := activityFixture(t, &fakeUndo{})
	// An entry of last month, outside every recent time choice.
	old := time.Now().AddDate(0, -1, 0)
	if err := f.st.AppendAudit(context.Background(), store.AuditEntry{Time: old, Tool: "ha_delete_file", Kind: "file", Client: "n8n", Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	for _, tc := range []struct {
		query string
		tools []string // every tool shown; nil: none
		err   string
	}{
		{"kind=device", []string{"ha_call_service"}, ""},
		{"kind=file", []string{"ha_write_file", "ha_delete_file"}, ""},
		{"kind=file&when=7d", []string{"ha_write_file"}, ""},
		{"kind=file&when=hour", []string{"ha_write_file"}, ""},
		{"client=claude-ai&kind=config", []string{"ha_update_automation"}, ""},
		{"kind=file&from=" + day(old) + "&to=" + day(old), []string{"ha_delete_file"}, ""},
		{"when=soon", nil, "the time filter takes hour, today or 7d"},
		{"from=yesterday", nil, "dates are YYYY-MM-DD"},
		{"from=2026-05-02&to=2026-05-01", nil, "the from date is after the to date"},
	} {
		w := f.do(call{method: http.MethodGet, path: "/activity?" + tc.query, remote: supervisorPeer, header: alice})
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", tc.query, w.Code)
		}
		if tc.err != "" {
			if !strings.Contains(body, tc.err) {
				t.Errorf("%s: the page does not say %q", tc.query, tc.err)
			}
			continue
		}
		for _, tool := range []string{"ha_call_service", "ha_update_automation", "ha_write_file", "ha_delete_file", "ha_execute_command", "ha_get_states"} {
			shown := strings.Contains(body, "<code>"+tool+"</code>")
			want := false
			for _, t := range tc.tools {
				want = want || t == tool
			}
			if shown != want {
				t.Errorf("%s: %s shown %v, want %v", tc.query, tool, shown, want)
			}
		}
	}
	// Paging keeps the time filter.
	for i := range auditPage + 1 {
		f.st.AppendAudit(context.Background(), store.AuditEntry{Tool: "ha_call_service", Kind: "device", Outcome: store.OutcomeOK, Time: time.Now().Add(-time.Duration(i) * time.Second)})
	}
	body := f.do(call{method: http.MethodGet, path: "/activity?kind=device&when=today", remote: supervisorPeer, header: alice}).Body.String()
	if !strings.Contains(body, `href="/activity?kind=device&amp;page=1&amp;when=today" id="older"`) {
		t.Errorf("the next page drops the filters:\n%s", body[strings.Index(body, `class="pager"`):])
	}
}

func TestActivityUndoPosts(t *testing.T) {
	t.Parallel()
	undo := &fakeUndo{}
	f, ids := activityFixture(t, undo)
	undo.plan = map[int64]func(string) (UndoResult, error){
		ids["light"]: func(string) (UndoResult, error) { return UndoResult{Done: "Put back: turn light.hallway on."}, nil },
		ids["garage"]: func(approved string) (UndoResult, error) {
			if approved == "d1g3st" {
				return UndoResult{Done: "Put back: close cover.garage_door."}, nil
			}
			return UndoResult{Confirm: &UndoConfirm{Question: "Undo will close cover.garage_door. Undo?", Digest: "d1g3st"}}, nil
		},
		ids["notify"]: func(string) (UndoResult, error) {
			return UndoResult{}, errors.New("it cannot be undone: notify.send cannot be taken back")
		},
	}
	csrf := f.p.csrfToken(User{ID: hass.DemoAdminID})
	post := func(entry string, form url.Values, header map[string]string) (int, string, string) {
		w := f.do(call{method: http.MethodPost, path: "/activity/" + strconv.FormatInt(ids[entry], 10) + "/undo", remote: supervisorPeer, header: header, form: form})
		return w.Code, w.Body.String(), w.Header().Get("Location")
	}
	withCSRF := func(extra ...string) url.Values {
		v := url.Values{"csrf": {csrf}}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		return v
	}

	// Without the CSRF token, or from another site, nothing is asked of the undoer.
	if code, _, _ := post("light", url.Values{}, alice); code != http.StatusForbidden {
		t.Errorf("no CSRF token: %d", code)
	}
	crossSite := map[string]string{"Sec-Fetch-Site": "cross-site"}
	for k, v := range alice {
		crossSite[k] = v
	}
	if code, _, _ := post("light", withCSRF(), crossSite); code != http.StatusForbidden {
		t.Errorf("cross-site: %d", code)
	}
	// A household member who is not an administrator is refused before anything runs.
	home, _ := testHA(t)
	sam := home.Model().Users()[1].ID
	w := f.do(call{method: http.MethodPost, path: "/activity/" + strconv.FormatInt(ids["light"], 10) + "/undo", remote: supervisorPeer,
		header: asUser(sam), form: url.Values{"csrf": {f.p.csrfToken(User{ID: sam})}}})
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "administrator") {
		t.Errorf("non-admin undo: %d", w.Code)
	}
	if len(undo.asked) != 0 {
		t.Fatalf("the undoer was asked by a refused request: %v", undo.asked)
	}

	// Done: back to Activity, which says so.
	code, _, loc := post("light", withCSRF(), alice)
	if code != http.StatusSeeOther || loc != "/activity?done=undone" {
		t.Fatalf("undo: %d to %q", code, loc)
	}
	page := f.do(call{method: http.MethodGet, path: loc, remote: supervisorPeer, header: alice}).Body.String()
	if !strings.Contains(page, `id="undo-notice"`) {
		t.Error("Activity does not say the undo was done")
	}
	// Sensitive: the question first, with its own form carrying the digest; the yes does it.
	code, body, _ := post("garage", withCSRF(), alice)
	if code != http.StatusOK || !strings.Contains(body, "Undo will close cover.garage_door. Undo?") ||
		!strings.Contains(body, `name="approved" value="d1g3st"`) || !strings.Contains(body, `id="undo-yes"`) {
		t.Fatalf("confirmation page: %d\n%s", code, body)
	}
	if code, _, loc := post("garage", withCSRF("approved", "d1g3st"), alice); code != http.StatusSeeOther || loc != "/activity?done=undone" {
		t.Errorf("confirmed undo: %d to %q", code, loc)
	}
	// Refused: the page says why.
	if _, body, _ := post("notify", withCSRF(), alice); !strings.Contains(body, "Not undone: it cannot be undone: notify.send cannot be taken back") {
		t.Errorf("a refused undo does not say why:\n%s", body)
	}
	want := []string{
		strconv.FormatInt(ids["light"], 10) + " Alice Admin ",
		strconv.FormatInt(ids["garage"], 10) + " Alice Admin ",
		strconv.FormatInt(ids["garage"], 10) + " Alice Admin d1g3st",
		strconv.FormatInt(ids["notify"], 10) + " Alice Admin ",
	}
	if strings.Join(undo.asked, "|") != strings.Join(want, "|") {
		t.Errorf("the undoer was asked %q, want %q", undo.asked, want)
	}
	// Not an entry id: not found, and nothing asked.
	for _, bad := range []string{"x", "0", "-3", "99999999999999999999"} {
		w := f.do(call{method: http.MethodPost, path: "/activity/" + bad + "/undo", remote: supervisorPeer, header: alice, form: withCSRF()})
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `<h1 class="page-title">No such page</h1>`) || !strings.Contains(w.Body.String(), "Go to Connect") {
			t.Errorf("entry %q: %d, not the panel's page with a way back:\n%s", bad, w.Code, w.Body.String())
		}
	}
}

func TestActivityTimeRange(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("here", 3600)
	now := time.Date(2026, 11, 28, 15, 30, 0, 0, loc)
	for _, tc := range []struct {
		when, from, to string
		since, until   time.Time
		err            bool
	}{
		{"", "", "", time.Time{}, time.Time{}, false},
		{"hour", "", "", now.Add(-time.Hour), time.Time{}, false},
		{"today", "", "", time.Date(2026, 11, 28, 0, 0, 0, 0, loc), time.Time{}, false},
		{"7d", "", "", now.AddDate(0, 0, -7), time.Time{}, false},
		{"", "2026-11-01", "2026-11-02", time.Date(2026, 11, 1, 0, 0, 0, 0, loc), time.Date(2026, 11, 3, 0, 0, 0, 0, loc), false},
		{"7d", "2026-01-01", "", now.AddDate(0, 0, -7), time.Time{}, false}, // the later start wins
		{"", "", "2026-11-27", time.Time{}, time.Date(2026, 11, 28, 0, 0, 0, 0, loc), false},
		{"week", "", "", time.Time{}, time.Time{}, true},
		{"", "0001-01-01", "", time.Time{}, time.Time{}, true},
		{"", "", "9999-12-31", time.Time{}, time.Time{}, true},
		{"", "2026-11-02", "2026-11-01", time.Time{}, time.Time{}, true},
		{"hour", "", "2026-01-01", time.Time{}, time.Time{}, true},
	} {
		since, until, err := timeRange(tc.when, tc.from, tc.to, now)
		if (err != nil) != tc.err || !since.Equal(tc.since) || !until.Equal(tc.until) {
			t.Errorf("timeRange(%q, %q, %q) = %v, %v, %v; want %v, %v, error %v", tc.when, tc.from, tc.to, since, until, err, tc.since, tc.until, tc.err)
		}
	}
}

// FuzzActivityTimeRange: whatever the URL says, the range is empty or ordered and inside the years a
// log can hold, or an error.
func FuzzActivityTimeRange(f *testing.F) {
	for _, s := range [][3]string{{"hour", "", ""}, {"", "2026-11-01", "2026-11-02"}, {"today", "2026-02-30", ""}, {"7d", "", "1999-12-31"}} {
		f.Add(s[0], s[1], s[2])
	}
	now := time.Date(2026, 11, 28, 15, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, when, from, to string) {
		since, until, err := timeRange(when, from, to, now)
		if err != nil {
			if !since.IsZero() || !until.IsZero() {
				t.Fatalf("an error with a range: %v %v", since, until)
			}
			return
		}
		if !since.IsZero() && !until.IsZero() && !since.Before(until) {
			t.Fatalf("since %v not before until %v", since, until)
		}
		for _, x := range []time.Time{since, until} {
			if !x.IsZero() && (x.Before(minDate) || x.After(maxDate)) {
				t.Fatalf("%v is outside the years a log holds", x)
			}
		}
	})
}

// A store that cannot be read gets the panel's error page with the way back, not bare text, and
// the cause stays in the log.
func TestActivityStoreFailureIsAPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.st.Close() // every read of the audit log now fails
	w := f.do(call{method: http.MethodGet, path: "/activity", remote: supervisorPeer, header: alice})
	body := w.Body.String()
	if w.Code != http.StatusInternalServerError || !strings.Contains(body, `<h1 class="page-title">Something went wrong</h1>`) ||
		!strings.Contains(body, "the audit log could not be read") || !strings.Contains(body, "Back to the page") {
		t.Fatalf("%d\n%s", w.Code, body)
	}
	if strings.Contains(body, "sql:") || strings.Contains(body, "database is closed") {
		t.Errorf("the cause reached the page:\n%s", body)
	}
}

func TestActivityZone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tz, want string // want "" is an error
	}{
		{"", "Local"},
		{"Europe/Berlin", "Europe/Berlin"},
		{"America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"},
		{"Etc/GMT+5", "Etc/GMT+5"},
		{"UTC", "UTC"},
		{"Mars/Olympus", ""},
		{"../../etc/passwd", ""},
		{"/etc/localtime", ""},
		{"Europe/Berlin\x00", ""},
		{strings.Repeat("A", 65), ""},
	} {
		loc, err := zone(tc.tz)
		switch {
		case tc.want == "" && (err == nil || !strings.Contains(err.Error(), "IANA name")):
			t.Errorf("zone(%q) = %v, %v; want an error naming what is accepted", tc.tz, loc, err)
		case tc.want != "" && (err != nil || loc.String() != tc.want):
			t.Errorf("zone(%q) = %v, %v; want %s", tc.tz, loc, err, tc.want)
		}
	}
}

// The browser's zone decides the day: 16:00 UTC on 10 June is already the 11th in Tokyo, 14:00 UTC
// is not; the paging links and the form keep the zone; an unknown zone is refused in words.
func TestActivityDaysAreTheBrowsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, at := range []time.Time{time.Date(2025, 6, 10, 14, 0, 0, 0, time.UTC), time.Date(2025, 6, 10, 16, 0, 0, 0, time.UTC)} {
		if err := f.st.AppendAudit(context.Background(), store.AuditEntry{Time: at, Tool: "ha_zone_test", Kind: "device", Outcome: store.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	f.p.now = func() time.Time { return time.Date(2025, 6, 10, 23, 30, 0, 0, time.UTC) }
	for _, tc := range []struct{ query, want, form string }{
		{"from=2025-06-11&to=2025-06-11&tz=Asia%2FTokyo", "1 entry,", "Asia/Tokyo"},
		{"when=today&tz=Asia%2FTokyo", "1 entry,", "Asia/Tokyo"}, // Tokyo's today began at 15:00 UTC
		{"from=2025-06-10&to=2025-06-10&tz=UTC", "2 entries,", "UTC"},
		{"when=today&tz=UTC", "2 entries,", "UTC"},
		{"from=2025-06-10&to=2025-06-10&tz=America%2FLos_Angeles", "2 entries,", "America/Los_Angeles"},
	} {
		body := f.do(call{method: http.MethodGet, path: "/activity?tool=ha_zone_test&" + tc.query, remote: supervisorPeer, header: alice}).Body.String()
		if !strings.Contains(body, tc.want) || !strings.Contains(body, `name="tz" value="`+tc.form+`"`) || strings.Contains(body, `id="undo-error"`) {
			t.Errorf("%s: want %q and the zone kept in the form:\n%s", tc.query, tc.want, body)
		}
	}
	body := f.do(call{method: http.MethodGet, path: "/activity?when=today&tz=Nowhere%2FAtAll", remote: supervisorPeer, header: alice}).Body.String()
	if !strings.Contains(body, "is not one hamcp knows") || !strings.Contains(body, `name="tz" value=""`) {
		t.Errorf("an unknown zone is not refused in words:\n%s", body)
	}
}

func FuzzActivityZone(f *testing.F) {
	for _, s := range []string{"", "Europe/Berlin", "../x", "Etc/GMT-14", "UTC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tz string) {
		loc, err := zone(tz)
		if (err == nil) == (loc == nil) {
			t.Fatalf("zone(%q) = %v, %v", tz, loc, err)
		}
		if err == nil && tz != "" && (strings.Contains(tz, "..") || strings.HasPrefix(tz, "/")) {
			t.Fatalf("zone(%q) opened a path", tz)
		}
	})
}

// An undo that stopped part way: the page says so in words, and the entry it left (outcome
// partial) offers its own Undo.
func TestActivityPartialUndo(t *testing.T) {
	t.Parallel()
	undo := &fakeUndo{plan: map[int64]func(string) (UndoResult, error){}}
	f := newFixture(t, Options{Undo: undo.undo})
	ctx := context.Background()
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	for i, e := range []store.AuditEntry{
		{Tool: "ha_call_service", Kind: "device", Outcome: store.OutcomeOK, ArgsSummary: "light.toggle [light.a, light.b]", Undo: `{"type":"state","ref":{}}`},
		{Tool: "undo", Kind: "device", Outcome: store.OutcomePartial, Detail: "light.turn_on failed after 1 of 2 calls had run",
			Undo: `{"type":"state","ref":{},"note":"Undo puts light.a back as before this undo."}`},
	} {
		e.Time = at.Add(time.Duration(i) * time.Second)
		if err := f.st.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// Only these two: the fixture's own permission request is logged too, at some moment now.
	list, _, err := f.st.ListAudit(ctx, store.AuditQuery{Since: at, Until: at.Add(2 * time.Second)})
	if err != nil || len(list) != 2 {
		t.Fatalf("%v %v", list, err)
	}
	partial, original := list[0].ID, list[1].ID
	undo.plan[original] = func(string) (UndoResult, error) {
		return UndoResult{Partial: "light.turn_on failed after 1 of 2 calls had run, so light.a changed and the rest did not"}, nil
	}
	w := f.do(call{method: http.MethodPost, path: "/activity/" + strconv.FormatInt(original, 10) + "/undo", remote: supervisorPeer, header: alice,
		form: url.Values{"csrf": {f.p.csrfToken(User{ID: hass.DemoAdminID})}}})
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "Partly undone: light.turn_on failed after 1 of 2 calls") {
		t.Fatalf("%d\n%s", w.Code, body)
	}
	if row := rowOf(t, body, partial); !strings.Contains(row, "undo-button") || !strings.Contains(row, "Undo puts light.a back") {
		t.Errorf("the partial entry offers no Undo:\n%s", row)
	}
}
