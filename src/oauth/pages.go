package oauth

import (
	"html/template"
	"net/http"

	"github.com/labstack/echo/v4"
)

// oauthError answers in the RFC 6749 §5.2 JSON shape.
func oauthError(c echo.Context, status int, code, desc string) error {
	noStore(c)
	body := map[string]string{"error": code}
	if desc != "" {
		body["error_description"] = desc
	}
	return c.JSON(status, body)
}

func noStore(c echo.Context) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}

func (s *Server) serverError(c echo.Context, what string, err error) error {
	s.log.Error("oauth: "+what, "err", err)
	return oauthError(c, http.StatusInternalServerError, "server_error", "hamcp could not "+what+"; see the add-on log")
}

// pageHeaders keep the pages hamcp shows during a login from being framed, cached, or leaking the
// URL (which carries login ids) in a Referer.
func pageHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	noStore(c)
}

type errorPageData struct {
	Title, Message string
}

// errorPage is shown instead of redirecting whenever the redirect target cannot be trusted.
func errorPage(c echo.Context, status int, title, msg string) error {
	pageHeaders(c)
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return pages.ExecuteTemplate(c.Response(), "error", errorPageData{Title: title, Message: msg})
}

// refusalRedirectSeconds is how long the refusal page stays before the browser goes back to the
// client on its own: long enough to read two sentences, short enough that the client is not left
// waiting.
const refusalRedirectSeconds = 8

type refusalData struct {
	Title, Message, ClientHost string
	Continue                   string // the client's redirect URI with the OAuth error
	Seconds                    int
}

// refusalPage says why a login ended and takes the browser back to the client with the error.
func refusalPage(c echo.Context, status int, d refusalData) error {
	pageHeaders(c)
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return pages.ExecuteTemplate(c.Response(), "refused", d)
}

type consentData struct {
	ClientName   string
	ClientID     string
	ClientIsURL  bool
	RedirectHost string
	UserName     string
	ReadOnly     bool
	LoginID      string
	CSRF         string
}

func consentPage(c echo.Context, d consentData) error {
	pageHeaders(c)
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(http.StatusOK)
	return pages.ExecuteTemplate(c.Response(), "consent", d)
}

var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.}} · hamcp</title>
{{template "style"}}</head><body><header class="toolbar"><span class="brand">hamcp</span></header><main>{{end}}

{{/* The look of the hamcp panel (Home Assistant's colours and type, darkened to 4.5:1 contrast), light
and dark, so a login or approval looks like the rest of hamcp. Inline: these pages serve no files. */}}
{{define "style"}}<style>
:root{--primary:#0277bd;--primary-text:#fff;--bg:#fafafa;--card:#fff;--text:#212121;--muted:#6b6b6b;--divider:rgba(0,0,0,.12);
--error:#c62828;--warning:#ffa600;--warn-bg:#fff3e0;--code-bg:rgba(0,0,0,.05);--toolbar:#01579b;--focus:#ffab00;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--primary:#4fc3f7;--primary-text:#0b1a22;--bg:#111;--card:#1c1c1c;--text:#e1e1e1;--muted:#9b9b9b;
--divider:rgba(225,225,225,.12);--error:#ff6e6e;--warn-bg:#2a2418;--code-bg:rgba(255,255,255,.07);--toolbar:#101e24}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:14px/1.5 Roboto,"Noto Sans",system-ui,-apple-system,"Segoe UI",sans-serif}
.toolbar{height:56px;display:flex;align-items:center;padding:0 16px;background:var(--toolbar);color:#fff}
.brand{font-size:20px}
main{background:var(--card);color:var(--text);max-width:520px;margin:24px auto;padding:24px;border:1px solid var(--divider);border-radius:12px}
@media (max-width:560px){main{margin:8px;padding:16px}}
h1{font-size:22px;font-weight:400;margin:0 0 12px}
dt{font-weight:500;margin-top:12px;color:var(--muted)}dd{margin:2px 0 0}
a{color:var(--primary)}
.buttons{display:flex;gap:8px;flex-wrap:wrap;margin-top:24px}
button{font:inherit;font-weight:500;font-size:13px;text-transform:uppercase;letter-spacing:.03em;min-height:44px;min-width:44px;
padding:8px 16px;border-radius:8px;border:1px solid var(--divider);background:transparent;color:var(--primary);cursor:pointer}
button.allow{background:var(--primary);border-color:var(--primary);color:var(--primary-text)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.warn{background:var(--warn-bg);border-left:4px solid var(--warning);padding:8px 12px;border-radius:4px}
code{font-family:"Roboto Mono",ui-monospace,Menlo,Consolas,monospace;font-size:13px;background:var(--code-bg);border-radius:4px;padding:1px 4px;word-break:break-all}
</style>{{end}}

{{define "error"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
<p>You can close this page.</p>
</main></body></html>{{end}}

{{define "refused"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{{.Seconds}};url={{.Continue}}">
<title>{{.Title}} · hamcp</title>
{{template "style"}}</head><body><header class="toolbar"><span class="brand">hamcp</span></header><main>
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
<p>You will be taken back to <code>{{.ClientHost}}</code> in {{.Seconds}} seconds, which tells your assistant that access was not granted.</p>
<p><a id="continue" href="{{.Continue}}">Return to {{.ClientHost}} now</a></p>
</main></body></html>{{end}}

{{define "consent"}}{{template "head" "Allow access"}}
<h1>Allow {{if .ClientName}}“{{.ClientName}}”{{else}}this application{{end}} to use your home?</h1>
<p>You are signed in to Home Assistant as <b>{{.UserName}}</b>.</p>
<dl>
<dt>Application</dt><dd>{{if .ClientName}}{{.ClientName}}{{else}}(no name given){{end}}{{if .ClientIsURL}}<br><code>{{.ClientID}}</code>{{end}}</dd>
<dt>Sends you back to</dt><dd><code>{{.RedirectHost}}</code></dd>
<dt>Access asked for</dt><dd>{{if .ReadOnly}}Read-only: it can look at your home but not change anything.{{else}}Full control: it can read and change your home through every hamcp tool you enabled (file, database and command tools still ask for your permission).{{end}}</dd>
</dl>
{{if not .ReadOnly}}<p class="warn">Only allow applications you started connecting yourself just now.</p>{{end}}
<form method="post" action="/oauth/consent">
<input type="hidden" name="login" value="{{.LoginID}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="buttons">
<button class="allow" type="submit" name="action" value="allow">Allow</button>
{{if not .ReadOnly}}<button type="submit" name="action" value="allow_read">Allow read-only</button>{{end}}
<button type="submit" name="action" value="deny">Deny</button>
</div>
</form>
</main></body></html>{{end}}
`))
