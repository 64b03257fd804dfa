package panel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/oauth"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
)

//go:embed assets
var assets embed.FS

var funcs = template.FuncMap{
	"fmtTime": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
	},
	"shortTime": func(t time.Time) string { return t.UTC().Format("01-02 15:04:05") },
	"redact":    redact,
	"short":     short,
	"kb":        func(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1024) },
	"scope": func(s string) string {
		if strings.Contains(" "+s+" ", " hamcp:full ") {
			return "full"
		}
		return "read-only"
	},
}

// pageNames are the pages; each gets its own template set, the layout around its content, made
// before any is executed (html/template cannot clone a set that has run).
var pageNames = []string{"connect", "approvals", "clients", "activity", "status"}

// pages parses the templates on first use, not at start: an add-on that never shows its panel
// (and every `hamcp stdio`) does not keep the parsed sets in memory (≈ 0.7 MB of an idle serve's
// RSS, docs/performance.md). The panel tests render every page, so a broken template still fails
// them.
var pages = sync.OnceValue(func() map[string]*template.Template {
	all := template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/pages.html"))
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.Must(all.Clone())
		template.Must(t.New("content").Parse(`{{template "` + name + `" .}}`))
		out[name] = t
	}
	return out
})

// refusalPage is the page for visitors the panel does not serve; parsed on first use like pages.
var refusalPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(assets, "assets/refused.html"))
})

// view is what every page template gets.
type view struct {
	Title, Page  string
	Base         string
	User         User
	CSRF         string
	PollMS       int64
	PendingCount int
	Flash        *flash
	Data         any
}

type flash struct{ Kind, Text string }

// flashes are the only messages a redirect can ask for: a query parameter picks one, so no text from
// the URL ever reaches the page.
var flashes = map[string]flash{
	"approved":       {"ok", "Approved. A call waiting for the answer goes ahead now; otherwise the assistant's next try does."},
	"denied":         {"ok", "Denied. The assistant's session cannot use that permission any more."},
	"revoked":        {"ok", "Revoked. The session's next call of that category asks again."},
	"oauth-revoked":  {"ok", "Sign-in revoked. The client's tokens no longer work."},
	"gone":           {"error", "That request was already answered, or it expired."},
	"grant-gone":     {"error", "That grant had already ended."},
	"oauth-disabled": {"error", "OAuth is off."},
}

func (p *Panel) routes() {
	m := http.NewServeMux()
	// Every route that shows or decides anything is for active Home Assistant administrators only;
	// the stylesheet and script are the same for everyone (the refusal page uses the stylesheet).
	admins := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if p.admit(w, r) {
				h(w, r)
			}
		}
	}
	m.HandleFunc("GET /{$}", admins(p.connectPage))
	m.HandleFunc("GET /connect/checks", admins(p.connectChecks))
	m.HandleFunc("GET /approvals", admins(p.approvalsPage))
	m.HandleFunc("GET /approvals/live", admins(p.approvalsLive))
	m.HandleFunc("POST /approvals/{id}/{answer}", admins(p.answer))
	m.HandleFunc("POST /grants/revoke", admins(p.revokeGrant))
	m.HandleFunc("GET /clients", admins(p.clientsPage))
	m.HandleFunc("POST /clients/revoke", admins(p.revokeOAuth))
	m.HandleFunc("GET /activity", admins(p.activityPage))
	m.HandleFunc("GET /status", admins(p.statusPage))
	m.HandleFunc("GET /static/{file}", p.static)
	p.mux = m
}

// view is what a template needs to draw for the request's user: links under the ingress prefix and
// forms carrying the user's CSRF token (none without a user, whose buttons are disabled).
func (p *Panel) view(r *http.Request, data any) view {
	u, _ := p.user(r)
	v := view{Base: base(r), User: u, PollMS: p.o.PollEvery.Milliseconds(), Data: data}
	if u.ID != "" {
		v.CSRF = p.csrfToken(u)
	}
	return v
}

func (p *Panel) render(w http.ResponseWriter, r *http.Request, page, title string, data any) {
	v := p.view(r, data)
	v.Page, v.Title, v.PendingCount = page, title, len(p.o.Permissions.Pending())
	if f, ok := flashes[r.URL.Query().Get("done")]; ok {
		v.Flash = &f
	}
	var buf bytes.Buffer
	err := pages()[page].ExecuteTemplate(&buf, "layout", v)
	if err != nil {
		p.log.Error("panel: render", "page", page, "err", err)
		http.Error(w, "500 internal error: the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// done sends the browser back to a page after a decision (POST/redirect/GET), with a fixed message.
func done(w http.ResponseWriter, r *http.Request, page, key string) {
	http.Redirect(w, r, base(r)+page+"?done="+key, http.StatusSeeOther)
}

// ---- Connect ----

type connectData struct {
	Connect
	DesktopJSON string
}

func (p *Panel) connectPage(w http.ResponseWriter, r *http.Request) {
	c := p.o.Connect(r)
	d := connectData{Connect: c}
	if c.SSH != nil {
		d.DesktopJSON = desktopJSON(c.SSH)
	}
	p.render(w, r, "connect", "Connect", d)
}

// desktopJSON is the claude_desktop_config.json entry for SSH, laid out as people write it (command
// first, the arguments on one line).
func desktopJSON(s *SSHConnect) string {
	args, _ := json.Marshal([]string{"-p", strconv.Itoa(s.Port), "-i", "/Users/you/.ssh/hamcp", "-o", "BatchMode=yes", s.User + "@" + s.Host})
	return "{\n  \"mcpServers\": {\n    \"home\": {\n      \"command\": \"ssh\",\n      \"args\": " +
		strings.ReplaceAll(string(args), `","`, `", "`) + "\n    }\n  }\n}"
}

// checkTimeout bounds each live check; the page shows "not reachable" after it.
const checkTimeout = 4 * time.Second

type checkResult struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// connectChecks runs every transport's reachability check at once and answers with their results.
func (p *Panel) connectChecks(w http.ResponseWriter, r *http.Request) {
	checks := p.o.Connect(r).Checks
	out := make([]checkResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
			defer cancel()
			start := time.Now()
			if err := c.Run(ctx); err != nil {
				out[i] = checkResult{Detail: err.Error()}
				return
			}
			out[i] = checkResult{OK: true, Detail: fmt.Sprintf("answered in %d ms", time.Since(start).Milliseconds())}
		}()
	}
	wg.Wait()
	writeJSON(w, map[string]any{"checks": out})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// ---- Approvals ----

type approvalsData struct {
	Pending  []permission.Pending
	Sessions []permission.SessionGrants
	Policies []permission.CategoryStatus
	Version  string
}

func (p *Panel) approvalsData() approvalsData {
	d := approvalsData{Pending: p.o.Permissions.Pending(), Sessions: p.o.Permissions.SessionGrants(), Policies: p.o.Permissions.Policies()}
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
	var err error
	switch answer {
	case "approve":
		err = p.o.Permissions.Approve(r.Context(), id, p.approver(u))
	case "deny":
		err = p.o.Permissions.Deny(r.Context(), id, p.approver(u))
	default:
		http.NotFound(w, r)
		return
	}
	switch {
	case errors.Is(err, permission.ErrUnknownRequest), errors.Is(err, permission.ErrRequestExpired):
		done(w, r, "approvals", "gone")
	case err != nil:
		p.log.Error("panel: answer a request", "request", id, "err", err)
		http.Error(w, "500 internal error: the answer could not be recorded", http.StatusInternalServerError)
	default:
		p.log.Info("panel: request answered", "request", id, "answer", answer, "user", u.ID)
		done(w, r, "approvals", map[string]string{"approve": "approved", "deny": "denied"}[answer])
	}
}

func (p *Panel) revokeGrant(w http.ResponseWriter, r *http.Request) {
	u, ok := p.checkPost(w, r)
	if !ok {
		return
	}
	c, err := permission.ParseCategory(r.PostForm.Get("category"))
	if err != nil {
		http.Error(w, "400 bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	err = p.o.Permissions.RevokeGrant(r.PostForm.Get("session"), c, p.approver(u))
	switch {
	case errors.Is(err, permission.ErrUnknownGrant):
		done(w, r, "approvals", "grant-gone")
	case err != nil:
		p.log.Error("panel: revoke a grant", "err", err)
		http.Error(w, "500 internal error: the grant could not be revoked", http.StatusInternalServerError)
	default:
		done(w, r, "approvals", "revoked")
	}
}

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
			http.Error(w, "500 internal error: hamcp's store could not be read", http.StatusInternalServerError)
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
		http.Error(w, "500 internal error: the sign-in could not be revoked", http.StatusInternalServerError)
	default:
		p.o.Permissions.RecordPanelAction("oauth", g.ClientName+" "+g.ClientID,
			"OAuth sign-in of "+g.UserName+" revoked by "+p.approver(u).String())
		done(w, r, "clients", "oauth-revoked")
	}
}

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

// ---- Status ----

type statusData struct {
	Status
	Uptime string
}

func (p *Panel) statusPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
	defer cancel()
	s := p.o.Status(ctx)
	p.render(w, r, "status", "Status", statusData{Status: s, Uptime: roughDuration(p.o.Permissions.Uptime())})
}

func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return count(int(d.Seconds()), "second")
	case d < time.Hour:
		return count(int(d.Minutes()), "minute")
	case d < 48*time.Hour:
		return count(int(d.Hours()), "hour") + " " + count(int(d.Minutes())%60, "minute")
	}
	return count(int(d.Hours())/24, "day") + " " + count(int(d.Hours())%24, "hour")
}

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// ---- Static files ----

func (p *Panel) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	types := map[string]string{"panel.css": "text/css; charset=utf-8", "panel.js": "text/javascript; charset=utf-8"}
	ct, ok := types[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}
