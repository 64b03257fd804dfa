package panel

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"

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
}

type activityData struct {
	Filters    []filter
	Filtered   bool
	Entries    []auditRow
	Total      int
	From, To   int
	Prev, Next template.URL // "activity?…", query escaped here
}

func (p *Panel) activityPage(w http.ResponseWriter, r *http.Request) {
	d := activityData{}
	if p.o.Audit == nil {
		p.render(w, r, "activity", "Activity", d)
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 0)
	query := store.AuditQuery{Limit: auditPage, Offset: page * auditPage}
	pm := p.o.Permissions
	// Sessions are filtered by label: the raw ids stay on the server.
	sessions := map[string]string{}
	for _, spec := range []struct {
		col         store.AuditColumn
		name, label string
		set         *string
	}{
		{store.AuditSession, "session", "Session", &query.SessionID},
		{store.AuditClient, "client", "Client", &query.Client},
		{store.AuditTool, "tool", "Tool", &query.Tool},
		{store.AuditCategory, "category", "Category", &query.Category},
		{store.AuditOutcome, "outcome", "Outcome", &query.Outcome},
	} {
		values, err := p.o.Audit.AuditValues(ctx, spec.col, 100)
		if err != nil {
			p.log.Error("panel: audit filters", "err", err)
			http.Error(w, "500 internal error: the audit log could not be read", http.StatusInternalServerError)
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
		http.Error(w, "500 internal error: the audit log could not be read", http.StatusInternalServerError)
		return
	}
	d.Total = total
	for _, e := range entries {
		row := auditRow{AuditEntry: e, Session: "—"}
		if e.SessionID != "" {
			row.Session = pm.SessionLabel(e.SessionID)
		}
		d.Entries = append(d.Entries, row)
	}
	if len(entries) > 0 {
		d.From, d.To = query.Offset+1, query.Offset+len(entries)
	}
	link := func(pg int) template.URL {
		v := url.Values{}
		for _, f := range d.Filters {
			if f.Selected != "" {
				v.Set(f.Name, f.Selected)
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
