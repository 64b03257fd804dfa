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
<title>{{.}} · hamcp</title>
{{template "style"}}</head><body><main>{{end}}

{{define "style"}}<style>
body{font-family:system-ui,sans-serif;background:#f5f5f5;color:#212121;margin:0;display:flex;justify-content:center;padding:8vh 16px}
main{background:#fff;max-width:480px;width:100%;padding:24px 32px;border-radius:12px;box-shadow:0 2px 10px #0002}
h1{font-size:1.3em}dt{font-weight:600;margin-top:12px}dd{margin:2px 0 0}
.buttons{display:flex;gap:8px;flex-wrap:wrap;margin-top:24px}
button{padding:10px 16px;border-radius:6px;border:1px solid #888;background:#fff;font-size:1em;cursor:pointer}
button.allow{background:#03a9f4;border-color:#03a9f4;color:#fff}
.warn{background:#fff3e0;border-left:4px solid #ff9800;padding:8px 12px}
code{word-break:break-all}
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
{{template "style"}}</head><body><main>
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
