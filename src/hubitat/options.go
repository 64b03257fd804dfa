// Package hubitat is hamcp's client for a Hubitat Elevation hub: the Maker API (devices,
// commands, modes, HSM, hub variables, rooms), live events from the hub's eventsocket or from
// Maker API postURL pushes feeding a device cache, and the hub's undocumented admin routes
// behind Hub Security. It knows the hub's wire formats and nothing of MCP.
package hubitat

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// EventMode chooses where live events come from.
type EventMode string

const (
	// EventsAuto uses the eventsocket and falls back to postURL pushes when the hub refuses
	// the WebSocket upgrade (Hubitat staff say the socket "may go away") and PushURL is set.
	EventsAuto EventMode = ""
	// EventsSocket uses only ws://<hub>/eventsocket.
	EventsSocket EventMode = "eventsocket"
	// EventsPostURL registers PushURL with Maker API's /postURL and takes the hub's POSTs.
	EventsPostURL EventMode = "posturl"
)

// Options says where the hub is and how to reach it. Field comments name the add-on option
// each one comes from; Validate's errors use those names.
type Options struct {
	// URL is the hub's root, e.g. "http://192.168.1.20" (hubitat_url).
	URL string
	// AppID is the Maker API instance's app id, the number in /apps/api/<appId>/ (hubitat_app_id).
	AppID string
	// Token is the Maker API access token (hubitat_token). It is never logged and is scrubbed
	// from every error.
	Token string
	// Username and Password are the Hub Security login, needed for the admin routes when Hub
	// Security is on (hubitat_username, hubitat_password); both or neither.
	Username, Password string
	// Devices, when not empty, narrows the devices Maker API authorised to these ids
	// (hubitat_devices). Others answer "device not found", as the hub's own app does.
	Devices []string
	// Events chooses the live-event source (hubitat_events); "" is auto.
	Events EventMode
	// RuleEndpoint is the Local End Point URL of a Rule Machine rule the user made for hamcp
	// (hubitat_rm_endpoint): http://<hub>/apps/api/<ruleId>/<anything>?access_token=<token>.
	// Rule Machine's endpoints take verbs such as setRuleBooleanTrue=<ids> in place of the last
	// segment, the only way to reach a rule's private boolean from off the hub. "" offers none.
	// Its token is a secret like Token.
	RuleEndpoint string
	// PushURL is where the hub can reach the handler from PushHandler, without the secret
	// segment the client adds (e.g. "http://192.168.1.5:8099/hubitat/events"). Needed by
	// EventsPostURL and by auto's fall-back.
	PushURL string
	// HTTPClient is used for Maker API, admin and WebSocket calls; nil means a client with
	// dial and TLS timeouts. Redirects are never followed (the admin routes answer with them).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Validate checks every option and returns all problems at once, each naming its option.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, err := normaliseURL(o.URL); err != nil {
		errs = append(errs, err)
	}
	switch id := strings.TrimSpace(o.AppID); {
	case id == "":
		bad("hubitat_app_id is empty: set it to the Maker API app's id, the number after /apps/api/ in its URLs")
	case !allDigits(id):
		bad("hubitat_app_id %q must be a number, the one after /apps/api/ in the Maker API URLs", clean(id))
	}
	switch tok := o.Token; {
	case strings.TrimSpace(tok) == "":
		bad("hubitat_token is empty: copy the access token from the Maker API app's page")
	case !tokenChars(tok):
		// Not echoed: it is a secret.
		bad("hubitat_token contains spaces, quotes or control characters: paste the token alone, as Maker API shows it")
	}
	if (o.Username == "") != (o.Password == "") {
		if o.Username == "" {
			bad("hubitat_username is empty but hubitat_password is set: give both (the Hub Security login) or neither")
		} else {
			bad("hubitat_password is empty but hubitat_username is set: give both (the Hub Security login) or neither")
		}
	}
	seen := map[string]bool{}
	for i, d := range o.Devices {
		d = strings.TrimSpace(d)
		switch {
		case d == "":
			bad("hubitat_devices[%d] is empty: list device ids such as \"12\"", i)
		case !allDigits(d):
			bad("hubitat_devices[%d] %q is not a device id: use the number from the device's page (/device/edit/<id>)", i, clean(d))
		case seen[d]:
			bad("hubitat_devices lists %q twice", d)
		}
		seen[d] = true
	}
	switch o.Events {
	case EventsAuto, EventsSocket:
	case EventsPostURL:
		if o.PushURL == "" {
			bad("hubitat_events is %q but no push URL is known: set the address the hub can reach hamcp at", o.Events)
		}
	default:
		bad("hubitat_events %q is not one of eventsocket, posturl (or empty for automatic)", clean(string(o.Events)))
	}
	if o.RuleEndpoint != "" {
		if _, _, err := ParseRuleEndpoint(o.URL, o.RuleEndpoint); err != nil {
			errs = append(errs, err)
		}
	}
	if o.PushURL != "" {
		if u, err := url.Parse(o.PushURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			bad("hubitat push URL %q must be http(s)://host[:port]/path with no query", clean(o.PushURL))
		}
	}
	return errors.Join(errs...)
}

// ParseRuleEndpoint reads hubitat_rm_endpoint against hubitat_url: the endpoint must be on the
// hub itself (its token goes nowhere else), under /apps/api/<ruleId>/, with the access token as
// its only query parameter. It returns the rule app's id and the token. Errors never echo the
// value: it carries the token.
func ParseRuleEndpoint(hubURL, raw string) (app, token string, err error) {
	const what = "hubitat_rm_endpoint must be the Local End Point URL a Rule Machine rule shows for its trigger, " +
		"http://<hub>/apps/api/<id>/trigger?access_token=<token>"
	base, err := normaliseURL(hubURL)
	if err != nil {
		return "", "", err
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return "", "", errors.New(what)
	}
	if u.Scheme+"://"+u.Host != base {
		return "", "", fmt.Errorf("%s; it names another address than hubitat_url %s: copy the local endpoint, not the cloud one", what, clean(base))
	}
	seg := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	if len(seg) != 4 || seg[0] != "apps" || seg[1] != "api" || !allDigits(seg[2]) || seg[2] == "" || seg[3] == "" {
		return "", "", errors.New(what)
	}
	q, err := url.ParseQuery(u.RawQuery)
	tok := q.Get("access_token")
	if err != nil || len(q) != 1 || len(q["access_token"]) != 1 || tok == "" || !tokenChars(tok) {
		return "", "", fmt.Errorf("%s; its query must be the access_token alone", what)
	}
	return seg[2], tok, nil
}

// normaliseURL checks hubitat_url and returns it without a trailing slash.
func normaliseURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New(`hubitat_url is empty: set it to the hub's address, e.g. "http://192.168.1.20"`)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("hubitat_url %q is not a valid URL: %v", clean(raw), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf(`hubitat_url %q must start with http:// or https://, e.g. "http://192.168.1.20"`, clean(raw))
	}
	if u.Host == "" {
		return "", fmt.Errorf(`hubitat_url %q has no host, e.g. "http://192.168.1.20"`, clean(raw))
	}
	if u.User != nil {
		return "", errors.New("hubitat_url must not carry user:password@: use hubitat_username and hubitat_password")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		// Not echoed: a pasted Maker API URL carries the token in its query.
		return "", errors.New("hubitat_url must not carry a query (?access_token=…): give only http://<hub-address>, and the token in hubitat_token")
	}
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		return "", fmt.Errorf(`hubitat_url %q must be the hub's root, without a path such as %q: e.g. "http://192.168.1.20"`, clean(u.Scheme+"://"+u.Host), clean(p))
	}
	u.Path, u.RawPath = "", ""
	return u.String(), nil
}

func allDigits(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// tokenChars accepts what Maker API tokens are made of (UUIDs) and anything else printable that
// cannot break a URL query or a header.
func tokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= 0x20 || b >= 0x7f || b == '"' || b == '\'' || b == '&' || b == '#' || b == '?' || b == '/' {
			return false
		}
	}
	return true
}
