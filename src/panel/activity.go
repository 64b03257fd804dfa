package panel

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// ---- Activity ----

// auditPage is how many entries a page shows.
const auditPage = 50

type filter struct {
	Name, Label, Selected string
	Choices               []string
}

type auditRow struct {
	store.AuditEntry
	Session string
	// Who names the caller as far as it is known: client, session, signed-in principal, permission.
	Who []string
	// CanUndo: the entry offers Undo; UndoNote says what undo does, or why there is none.
	CanUndo  bool
	UndoNote string
}

// when is one choice of the time filter.
type when struct{ Value, Label string }

var whens = []when{{"", "all time"}, {"hour", "last hour"}, {"today", "today"}, {"7d", "last 7 days"}}

type activityData struct {
	Filters  []filter
	Whens    []when
	When     string
	From, To string // the from–to dates as given (YYYY-MM-DD)
	TZ       string // the browser's IANA time zone the dates and "today" are read in; "" is hamcp's own
	Filtered bool
	Entries  []auditRow
	Total    int
	First    int
	Last     int
	Prev     template.URL // "activity?…", query escaped here
	Next     template.URL
	activityNote
}

// activityNote is what an undo tells the page: done, failed, or a question first.
type activityNote struct {
	Notice  string
	Error   string
	Confirm *confirmView
}

type confirmView struct {
	ID int64
	UndoConfirm
}

func (p *Panel) activityPage(w http.ResponseWriter, r *http.Request) {
	var n activityNote
	if r.URL.Query().Get("done") == "undone" {
		n.Notice = "Undone. It is back as it was; the undo is listed below."
	}
	p.activityWith(w, r, n)
}

// activityWith draws the Activity page with n on top: after an undo, the page shows the log as it
// is now, with what happened.
func (p *Panel) activityWith(w http.ResponseWriter, r *http.Request, n activityNote) {
	d := activityData{Whens: whens, activityNote: n}
	if p.o.Audit == nil {
		p.render(w, r, "activity", "Activity", d)
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 0)
	query := store.AuditQuery{Limit: auditPage, Offset: page * auditPage}
	d.When, d.From, d.To, d.TZ = q.Get("when"), q.Get("from"), q.Get("to"), q.Get("tz")
	var since, until time.Time
	loc, err := zone(d.TZ)
	if err == nil {
		since, until, err = timeRange(d.When, d.From, d.To, p.now().In(loc))
	}
	if err != nil {
		d.Error = err.Error()
		d.When, d.From, d.To, d.TZ = "", "", "", ""
	}
	query.Since, query.Until = since, until
	d.Filtered = !since.IsZero() || !until.IsZero()
	pm := p.o.Permissions
	// Sessions are filtered by label: the raw ids stay on the server.
	sessions := map[string]string{}
	for _, spec := range []struct {
		col         store.AuditColumn
		name, label string
		set         *string
	}{
		{store.AuditKind, "kind", "Kind", &query.Kind},
		{store.AuditClient, "client", "Client", &query.Client},
		{store.AuditSession, "session", "Session", &query.SessionID},
		{store.AuditTool, "tool", "Tool", &query.Tool},
		{store.AuditCategory, "category", "Permission", &query.Category},
		{store.AuditOutcome, "outcome", "Outcome", &query.Outcome},
	} {
		values, err := p.o.Audit.AuditValues(ctx, spec.col, 100)
		if err != nil {
			p.log.Error("panel: audit filters", "err", err)
			p.failed(w, r, "the audit log could not be read")
			return
		}
		f := filter{Name: spec.name, Label: spec.label, Selected: q.Get(spec.name)}
		for _, v := range values {
			shown := v
			if spec.col == store.AuditSession {
				shown = pm.SessionLabel(v)
				sessions[shown] = v
			}
			f.Choices = append(f.Choices, shown)
		}
		if f.Selected != "" {
			d.Filtered = true
			raw := f.Selected
			if spec.col == store.AuditSession {
				if raw = sessions[f.Selected]; raw == "" {
					raw = "\x00no such session" // matches nothing
				}
			}
			*spec.set = raw
		}
		d.Filters = append(d.Filters, f)
	}
	entries, total, err := p.o.Audit.ListAudit(ctx, query)
	if err != nil {
		p.log.Error("panel: audit log", "err", err)
		p.failed(w, r, "the audit log could not be read")
		return
	}
	d.Total = total
	for _, e := range entries {
		d.Entries = append(d.Entries, p.row(e))
	}
	if len(entries) > 0 {
		d.First, d.Last = query.Offset+1, query.Offset+len(entries)
	}
	link := func(pg int) template.URL {
		v := url.Values{}
		for _, f := range d.Filters {
			if f.Selected != "" {
				v.Set(f.Name, f.Selected)
			}
		}
		for name, val := range map[string]string{"when": d.When, "from": d.From, "to": d.To, "tz": d.TZ} {
			if val != "" {
				v.Set(name, val)
			}
		}
		if pg > 0 {
			v.Set("page", strconv.Itoa(pg))
		}
		// url.Values.Encode escapes every value, so the link is a plain relative URL.
		return template.URL("activity?" + v.Encode())
	}
	if page > 0 {
		d.Prev = link(page - 1)
	}
	if query.Offset+len(entries) < total {
		d.Next = link(page + 1)
	}
	p.render(w, r, "activity", "Activity", d)
}

// row is one entry as the page shows it: the session by its label, and whether Undo is offered.
func (p *Panel) row(e store.AuditEntry) auditRow {
	row := auditRow{AuditEntry: e, Session: "—"}
	if e.SessionID != "" {
		row.Session = p.o.Permissions.SessionLabel(e.SessionID)
	}
	for _, w := range []string{e.Client, row.Session, e.Principal, e.Category} {
		if w != "" && w != "—" {
			row.Who = append(row.Who, w)
		}
	}
	if e.Category != "" {
		row.Who[len(row.Who)-1] = "permission: " + e.Category
	}
	u := parseUndo(e.Undo)
	switch {
	case e.Undone() || e.Kind == "":
	case e.Outcome != store.OutcomeOK && e.Outcome != store.OutcomePartial:
		row.UndoNote = "Nothing to undo: the call did not succeed."
	case u.Read:
		row.UndoNote = "Nothing to undo: it only read."
	case u.Type != "" && p.o.Undo != nil:
		row.CanUndo, row.UndoNote = true, u.Note
	case u.Note != "" && u.Type == "":
		row.UndoNote = "Cannot be undone: " + u.Note
	default:
		row.UndoNote = "Cannot be undone: " + cannotUndo[e.Kind]
	}
	return row
}

// maxRange bounds a from–to filter's dates to what a log can hold, so a typed year 0001 or 9999
// never reaches the query as an overflowing millisecond count.
var minDate, maxDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// zone is the time zone the page's dates are read in: the browser's (panel.js fills the form's tz
// from Intl), so "today" and a typed date mean what the user's clock says, not hamcp's, which
// differ when the user is away. An empty tz is hamcp's own zone (a browser without script).
func zone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.Local, nil
	}
	// LoadLocation also opens files by name: only an IANA name's characters reach it.
	ok := len(tz) <= 64 && !strings.Contains(tz, "..") && !strings.HasPrefix(tz, "/")
	for _, c := range tz {
		ok = ok && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("/_+-", c))
	}
	if ok {
		if loc, err := time.LoadLocation(tz); err == nil {
			return loc, nil
		}
	}
	return nil, errors.New("the time zone " + strconv.Quote(short(tz, 40)) + " is not one hamcp knows: use an IANA name such as Europe/Berlin, or clear the filter")
}

// timeRange turns the time filter into [since, until): a choice of when, or from–to days (dates in
// now's time zone, to inclusive). The parameters come from the URL: anything else is an
// error that says what is accepted, and filters nothing.
func timeRange(when, from, to string, now time.Time) (since, until time.Time, err error) {
	switch when {
	case "":
	case "hour":
		since = now.Add(-time.Hour)
	case "today":
		y, m, d := now.Date()
		since = time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	case "7d":
		since = now.AddDate(0, 0, -7)
	default:
		return time.Time{}, time.Time{}, errors.New("the time filter takes hour, today or 7d")
	}
	day := func(s string) (time.Time, error) {
		t, err := time.ParseInLocation(time.DateOnly, s, now.Location())
		if err != nil || t.Before(minDate) || !t.Before(maxDate) {
			return time.Time{}, errors.New("dates are YYYY-MM-DD, between 2000 and 2199: " + strconv.Quote(short(s, 40)) + " is not one")
		}
		return t, nil
	}
	if from != "" {
		f, err := day(from)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if f.After(since) {
			since = f
		}
	}
	if to != "" {
		t, err := day(to)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		until = t.AddDate(0, 0, 1)
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return time.Time{}, time.Time{}, errors.New("the from date is after the to date")
	}
	return since, until, nil
}
