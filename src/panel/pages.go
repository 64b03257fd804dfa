package panel

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/permission"
)

//go:embed assets
var assets embed.FS

var funcs = template.FuncMap{
	// Times are written in UTC and rewritten by panel.js into the browser's time zone, relative when
	// recent ("3 min ago") with the full time on hover; without JavaScript the UTC time stays.
	"fmtTime":   func(t time.Time) template.HTML { return timeTag(t, "2006-01-02 15:04:05 UTC") },
	"shortTime": func(t time.Time) template.HTML { return timeTag(t, "01-02 15:04:05 UTC") },
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
var pageNames = []string{"connect", "approvals", "clients", "activity", "status", "error"}

// pages parses the templates on first use, not at start: an add-on that never shows its panel
// (and every `hamcp stdio`) does not keep the parsed sets in memory (≈ 0.7 MB of an idle serve's
// RSS, docs/performance.md). The panel tests render every page, so a broken template still fails
// them.
var pages = sync.OnceValue(func() map[string]*template.Template {
	all := template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/connect.html", "assets/approvals.html", "assets/clients.html", "assets/activity.html", "assets/status.html"))
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
// the URL ever reaches the page. An answer's words come from the permission manager (flashFor).
var flashes = map[string]flash{
	"revoked":        {"ok", "Revoked. The session's next call of that category asks again."},
	"oauth-revoked":  {"ok", "Sign-in revoked. The client's tokens no longer work."},
	"gone":           {"error", "That request was already answered, or it expired."},
	"grant-gone":     {"error", "That grant had already ended."},
	"oauth-disabled": {"error", "OAuth is off."},
}

// flashFor picks the message a redirect asked for. An answer names its request's kind (a category, or
// "confirm" for one action), which must be one hamcp knows, and the manager words what it did.
func (p *Panel) flashFor(q url.Values) *flash {
	key := q.Get("done")
	if f, ok := flashes[key]; ok {
		return &f
	}
	if key != "approved" && key != "denied" {
		return nil
	}
	c, err := permission.ParseCategory(q.Get("kind"))
	if err != nil && q.Get("kind") != string(permission.ConfirmKind) {
		return nil
	}
	if err != nil {
		c = permission.ConfirmKind
	}
	_, text := p.o.Permissions.Answered(c, key == "approved")
	return &flash{"ok", text}
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
	m.HandleFunc("POST /activity/{id}/undo", admins(p.undoPost))
	m.HandleFunc("GET /status", admins(p.statusPage))
	m.HandleFunc("GET /static/{file}", p.static)
	m.HandleFunc("/", admins(func(w http.ResponseWriter, r *http.Request) { p.notFound(w, r) }))
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

// errorData is a page that says what went wrong and offers a way back.
type errorData struct {
	Status          int
	Text            string
	Back, BackLabel string // Back is relative to the panel's base
}

// errorPage answers with the panel's layout around a message and a link back, keeping the status.
func (p *Panel) errorPage(w http.ResponseWriter, r *http.Request, status int, title string, d errorData) {
	d.Status = status
	p.renderStatus(w, r, status, "error", title, d)
}

func (p *Panel) notFound(w http.ResponseWriter, r *http.Request) {
	p.errorPage(w, r, http.StatusNotFound, "No such page", errorData{
		Text: "The hamcp panel has no page at this address.", Back: "", BackLabel: "Go to Connect"})
}

// failed answers a request hamcp could not serve: the panel's layout, the 500 status, what could
// not be done in words (never the cause: that goes to the log), and the way back to the page.
func (p *Panel) failed(w http.ResponseWriter, r *http.Request, what string) {
	p.errorPage(w, r, http.StatusInternalServerError, "Something went wrong", errorData{
		Text: "500 internal error: " + what + ". hamcp's log says why; try again in a moment.",
		Back: backTo(r), BackLabel: "Back to the page"})
}

// badRequest answers a form that cannot be acted on, saying why and offering the way back.
func (p *Panel) badRequest(w http.ResponseWriter, r *http.Request, why string) {
	p.errorPage(w, r, http.StatusBadRequest, "Request refused", errorData{
		Text: "400 bad request: " + why + ", so nothing was done.", Back: backTo(r), BackLabel: "Back to the page"})
}

func (p *Panel) render(w http.ResponseWriter, r *http.Request, page, title string, data any) {
	p.renderStatus(w, r, http.StatusOK, page, title, data)
}

func (p *Panel) renderStatus(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	v := p.view(r, data)
	v.Page, v.Title, v.PendingCount = page, title, len(p.o.Permissions.Pending())
	v.Flash = p.flashFor(r.URL.Query())
	var buf bytes.Buffer
	err := pages()[page].ExecuteTemplate(&buf, "layout", v)
	if err != nil {
		p.log.Error("panel: render", "page", page, "err", err)
		http.Error(w, "500 internal error: the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// done sends the browser back to a page after a decision (POST/redirect/GET), with a fixed message.
func done(w http.ResponseWriter, r *http.Request, page, key string) {
	http.Redirect(w, r, base(r)+page+"?done="+key, http.StatusSeeOther)
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

// timeTag is a <time> element for t; both parts are formatted here from a time value, so nothing
// in them needs escaping.
func timeTag(t time.Time, layout string) template.HTML {
	if t.IsZero() {
		return "—"
	}
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `">` + u.Format(layout) + `</time>`)
}
