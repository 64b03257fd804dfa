package hubitat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The hub's admin routes are undocumented UI routes (upstream's Hub Admin tools call them on
// the hub's loopback); firmware changes them, so every reply is read as text and parsed as JSON
// where it is JSON.

// adminSession is the Hub Security cookie, kept 30 minutes as upstream does.
type adminSession struct {
	mu      sync.Mutex
	cookie  string
	expires time.Time
}

// AdminReply is an admin route's answer: JSON when the body is JSON, else text.
type AdminReply struct {
	Status   int
	JSON     json.RawMessage // nil when the body is not JSON
	Text     string          // the body as text, always set
	Body     []byte          // the body as sent (binary for a backup)
	Location string          // a redirect's target, when there was one
}

// ParseAdminReply reads a body that firmware sends as JSON or as text, whatever the
// Content-Type says (older firmware labels JSON text/html).
func ParseAdminReply(status int, body []byte) AdminReply {
	r := AdminReply{Status: status, Body: body, Text: strings.ToValidUTF8(string(body), "\uFFFD")}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && json.Valid(t) {
		r.JSON = append(json.RawMessage(nil), t...)
	}
	return r
}

// Number reads a reply that is a number in any of the forms firmware uses: plain text ("123456",
// "45.2\n"), a JSON number or string, or a JSON object with one numeric member.
func (r AdminReply) Number() (float64, bool) {
	if r.JSON != nil {
		if f, ok := parseNumber(r.JSON); ok {
			return f, true
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(r.JSON, &obj) == nil {
			var found []float64
			for _, v := range obj {
				if f, ok := parseNumber(v); ok {
					found = append(found, f)
				}
			}
			if len(found) == 1 {
				return found[0], true
			}
		}
		return 0, false
	}
	s := strings.TrimSpace(r.Text)
	s = strings.TrimSpace(strings.TrimRight(s, "KBkbC°% "))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f > 1e300 || f < -1e300 {
		return 0, false
	}
	return f, true
}

// Admin calls one admin route (path starts with "/", may carry a query), logging in with Hub
// Security when the hub asks for it: a 401/403 or a redirect to /login drops the cookie, logs
// in again and retries once.
func (c *Client) Admin(ctx context.Context, method, path string, form url.Values) (AdminReply, error) {
	return c.admin(ctx, method, path, form, c.callTimeout)
}

func (c *Client) admin(ctx context.Context, method, pathQuery string, form url.Values, timeout time.Duration) (AdminReply, error) {
	return c.adminSend(ctx, method, pathQuery, formPayload(form), timeout)
}

// AdminJSON POSTs v as a JSON body to an admin route (the saveOrUpdateJson family), with the
// same Hub Security handling as Admin.
func (c *Client) AdminJSON(ctx context.Context, path string, v any) (AdminReply, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return AdminReply{}, err
	}
	return c.adminSend(ctx, http.MethodPost, path, &payload{body: b, ctype: "application/json"}, c.callTimeout)
}

func (c *Client) adminSend(ctx context.Context, method, pathQuery string, p *payload, timeout time.Duration) (AdminReply, error) {
	path, rawQuery, _ := strings.Cut(pathQuery, "?")
	if !strings.HasPrefix(path, "/") || strings.Contains(path, "..") || strings.HasPrefix(path, "/apps/api/") {
		return AdminReply{}, fmt.Errorf("hubitat admin path %q must be a hub route such as /hub/advanced/freeOSMemory", clean(path))
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return AdminReply{}, fmt.Errorf("hubitat admin path %q has a malformed query: %w", clean(pathQuery), err)
	}
	for attempt := 0; ; attempt++ {
		cookie := c.cachedCookie()
		if attempt > 0 {
			if cookie, err = c.login(ctx); err != nil {
				return AdminReply{}, err
			}
		}
		r, err := c.send(ctx, method, path, query, p, cookie, timeout)
		if err != nil {
			return AdminReply{}, err
		}
		if needsLogin(r) {
			c.dropSession()
			if c.username == "" {
				return AdminReply{}, fmt.Errorf("hubitat %s: %w", path, ErrNoLogin)
			}
			if attempt == 0 {
				continue
			}
			return AdminReply{}, fmt.Errorf("hubitat %s: %w after a fresh Hub Security login (check the user's rights)", path, ErrUnauthorized)
		}
		if r.status >= 400 {
			return AdminReply{}, c.apiError(path, r)
		}
		rep := ParseAdminReply(r.status, r.body)
		rep.Location = r.location
		return rep, nil
	}
}

func needsLogin(r *reply) bool {
	if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
		return true
	}
	if r.status >= 300 && r.status < 400 {
		if u, err := url.Parse(r.location); err == nil && strings.HasPrefix(u.Path, "/login") {
			return true
		}
	}
	return false
}

// cachedCookie is the Hub Security cookie while it is younger than 30 minutes. Logging in only
// when the hub asks (a 401/403 or a redirect to /login) also works for hubs without Hub Security.
func (c *Client) cachedCookie() string {
	s := &c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cookie != "" && time.Now().Before(s.expires) {
		return s.cookie
	}
	s.cookie = ""
	return ""
}

// login posts the Hub Security form and keeps the first cookie it sets.
func (c *Client) login(ctx context.Context) (string, error) {
	s := &c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	form := url.Values{"username": {c.username}, "password": {c.password}, "submit": {"Login"}}
	r, err := c.do(ctx, http.MethodPost, "/login", nil, form, "", c.callTimeout)
	if err != nil {
		return "", err
	}
	cookie := firstCookie(r)
	if cookie == "" || r.status >= 400 || needsLogin(r) {
		return "", fmt.Errorf("hubitat Hub Security login as hubitat_username %q failed (HTTP %d): %w; check hubitat_username and hubitat_password",
			clean(c.username), r.status, ErrUnauthorized)
	}
	s.cookie, s.expires = cookie, time.Now().Add(c.sessionTTL)
	return cookie, nil
}

func (c *Client) dropSession() {
	c.session.mu.Lock()
	c.session.cookie = ""
	c.session.mu.Unlock()
}

// firstCookie is the first Set-Cookie pair (name=value, attributes dropped), as upstream keeps it.
func firstCookie(r *reply) string {
	if len(r.cookies) == 0 {
		return ""
	}
	pair, _, _ := strings.Cut(r.cookies[0], ";")
	if !strings.Contains(pair, "=") {
		return ""
	}
	return strings.TrimSpace(pair)
}

// FreeMemoryKB is /hub/advanced/freeOSMemory.
func (c *Client) FreeMemoryKB(ctx context.Context) (float64, error) {
	return c.adminNumber(ctx, "/hub/advanced/freeOSMemory")
}

// TemperatureC is /hub/advanced/internalTempCelsius.
func (c *Client) TemperatureC(ctx context.Context) (float64, error) {
	return c.adminNumber(ctx, "/hub/advanced/internalTempCelsius")
}

// DatabaseSizeKB is /hub/advanced/databaseSize.
func (c *Client) DatabaseSizeKB(ctx context.Context) (float64, error) {
	return c.adminNumber(ctx, "/hub/advanced/databaseSize")
}

func (c *Client) adminNumber(ctx context.Context, path string) (float64, error) {
	r, err := c.Admin(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	f, ok := r.Number()
	if !ok {
		return 0, fmt.Errorf("hubitat %s: expected a number, got %q", path, clean(r.Text))
	}
	return f, nil
}

// CodeType is one app or driver code entry from /hub2/userAppTypes or /hub2/userDeviceTypes.
type CodeType struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Version   int64  `json:"version,omitempty"`
}

// ParseCodeTypes reads a code-type list; ids and versions come as numbers or strings.
func ParseCodeTypes(b []byte) ([]CodeType, error) {
	var wire []struct {
		ID        json.RawMessage `json:"id"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		Version   json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return nil, err
	}
	out := make([]CodeType, 0, len(wire))
	for _, w := range wire {
		ct := CodeType{ID: idString(w.ID), Name: w.Name, Namespace: w.Namespace}
		if v, ok := parseNumber(w.Version); ok {
			ct.Version = int64(v)
		}
		out = append(out, ct)
	}
	return out, nil
}

// AppTypes lists the user app code installed on the hub.
func (c *Client) AppTypes(ctx context.Context) ([]CodeType, error) {
	return c.codeTypes(ctx, "/hub2/userAppTypes")
}

// DriverTypes lists the user driver code installed on the hub.
func (c *Client) DriverTypes(ctx context.Context) ([]CodeType, error) {
	return c.codeTypes(ctx, "/hub2/userDeviceTypes")
}

func (c *Client) codeTypes(ctx context.Context, path string) ([]CodeType, error) {
	r, err := c.Admin(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	ts, err := ParseCodeTypes([]byte(r.Text))
	if err != nil {
		return nil, fmt.Errorf("hubitat %s: expected a JSON list, got %q", path, clean(r.Text))
	}
	return ts, nil
}

// ZWaveInfo is /hub2/zwaveInfo (JSON on current firmware, text on some).
func (c *Client) ZWaveInfo(ctx context.Context) (AdminReply, error) {
	return c.Admin(ctx, http.MethodGet, "/hub2/zwaveInfo", nil)
}

// ZigbeeInfo is /hub2/zigbeeInfo.
func (c *Client) ZigbeeInfo(ctx context.Context) (AdminReply, error) {
	return c.Admin(ctx, http.MethodGet, "/hub2/zigbeeInfo", nil)
}

// CodeKind says whether a code call is about an app or a driver.
type CodeKind string

const (
	AppCode    CodeKind = "app"
	DriverCode CodeKind = "driver"
)

// Source is an app's or driver's code and its version, the optimistic lock for updates.
type Source struct {
	ID      string `json:"id"`
	Source  string `json:"source"`
	Version int64  `json:"version"`
	Status  string `json:"status,omitempty"`
}

// CodeSource is /app/ajax/code?id=N or /driver/ajax/code?id=N.
func (c *Client) CodeSource(ctx context.Context, kind CodeKind, id string) (Source, error) {
	if err := codeArgs(kind, id); err != nil {
		return Source{}, err
	}
	r, err := c.Admin(ctx, http.MethodGet, "/"+string(kind)+"/ajax/code?id="+id, nil)
	if err != nil {
		return Source{}, err
	}
	var w struct {
		Source       string          `json:"source"`
		Version      json.RawMessage `json:"version"`
		Status       string          `json:"status"`
		ErrorMessage string          `json:"errorMessage"`
	}
	if r.JSON == nil || json.Unmarshal(r.JSON, &w) != nil {
		return Source{}, fmt.Errorf("hubitat %s code %s: unexpected reply %q", kind, id, clean(r.Text))
	}
	if w.Status == "error" || (w.Source == "" && w.ErrorMessage != "") {
		return Source{}, fmt.Errorf("hubitat %s code %s: %s", kind, id, clean(w.ErrorMessage))
	}
	s := Source{ID: id, Source: w.Source, Status: w.Status}
	if v, ok := parseNumber(w.Version); ok {
		s.Version = int64(v)
	}
	return s, nil
}

func codeArgs(kind CodeKind, id string) error {
	if kind != AppCode && kind != DriverCode {
		return fmt.Errorf("code kind %q must be app or driver", kind)
	}
	if !allDigits(id) {
		return fmt.Errorf("%sId %q must be the number from the code editor's URL", kind, clean(id))
	}
	return nil
}

// saveReply is /app|driver/saveOrUpdateJson's answer: {success, id, message[, version]}, the
// compiler's error riding in message (upstream's toolInstallItem and toolUpdateItem read it so).
type saveReply struct {
	Success      bool            `json:"success"`
	ID           json.RawMessage `json:"id"`
	Message      string          `json:"message"`
	ErrorMessage string          `json:"errorMessage"`
	Version      json.RawMessage `json:"version"`
}

// saveCode posts {id, source, version} to /app|driver/saveOrUpdateJson, the route firmware
// 2.5's code editor uses: id null creates, a number updates in place. (The older form routes,
// /app/save and /app/ajax/update, return an HTML page and create nothing on 2.5.)
func (c *Client) saveCode(ctx context.Context, kind CodeKind, id any, source string, version int64) (saveReply, error) {
	path := "/" + string(kind) + "/saveOrUpdateJson"
	r, err := c.AdminJSON(ctx, path, map[string]any{"id": id, "source": source, "version": version})
	if err != nil {
		return saveReply{}, err
	}
	var w saveReply
	if r.JSON == nil || json.Unmarshal(r.JSON, &w) != nil {
		return saveReply{}, fmt.Errorf("hubitat %s: unexpected reply %q", path, clean(r.Text))
	}
	if !w.Success {
		msg := w.Message
		if msg == "" {
			msg = w.ErrorMessage
		}
		return saveReply{}, fmt.Errorf("hubitat refused the %s code: %s", kind, clean(msg))
	}
	return w, nil
}

// InstallCode creates new app or driver code and returns its id.
func (c *Client) InstallCode(ctx context.Context, kind CodeKind, source string) (string, error) {
	if err := codeArgs(kind, "0"); err != nil {
		return "", err
	}
	if strings.TrimSpace(source) == "" {
		return "", errors.New("source is empty: give the Groovy code to install")
	}
	w, err := c.saveCode(ctx, kind, nil, source, 1)
	if err != nil {
		return "", err
	}
	if id := idString(w.ID); allDigits(id) {
		return id, nil
	}
	return "", fmt.Errorf("hubitat %s/saveOrUpdateJson reported success but no %s id: check the hub's %s code list", kind, kind, kind)
}

// UpdateCode reads the current version, then saves the new source under it. A compile error
// comes back as an error carrying the hub's message.
func (c *Client) UpdateCode(ctx context.Context, kind CodeKind, id, source string) (Source, error) {
	cur, err := c.CodeSource(ctx, kind, id)
	if err != nil {
		return Source{}, err
	}
	if strings.TrimSpace(source) == "" {
		return Source{}, errors.New("source is empty: give the full Groovy code")
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	w, err := c.saveCode(ctx, kind, n, source, cur.Version)
	if err != nil {
		return Source{}, err
	}
	// The route is an upsert: success under another id means the hub saved a copy elsewhere.
	if got := idString(w.ID); got != "" && got != id {
		return Source{}, fmt.Errorf("hubitat saved the %s code under id %s instead of %s: a duplicate may have been created; check the hub's %s code list",
			kind, clean(got), id, kind)
	}
	out := Source{ID: id, Source: source, Version: cur.Version + 1, Status: "success"}
	if v, ok := parseNumber(w.Version); ok {
		out.Version = int64(v)
	}
	return out, nil
}

// DeleteCode deletes app code (/app/edit/deleteJsonSafe/<id>) or driver code
// (/driver/editor/deleteJson/<id>).
func (c *Client) DeleteCode(ctx context.Context, kind CodeKind, id string) error {
	if err := codeArgs(kind, id); err != nil {
		return err
	}
	path := "/app/edit/deleteJsonSafe/" + id
	if kind == DriverCode {
		path = "/driver/editor/deleteJson/" + id
	}
	r, err := c.Admin(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	var w struct {
		Status       json.RawMessage `json:"status"`
		ErrorMessage string          `json:"errorMessage"`
		Message      string          `json:"message"`
	}
	if r.JSON == nil || json.Unmarshal(r.JSON, &w) != nil {
		return fmt.Errorf("hubitat %s delete: unexpected reply %q", kind, clean(r.Text))
	}
	if st := strings.Trim(string(bytes.TrimSpace(w.Status)), `"`); st != "true" && st != "success" {
		msg := w.ErrorMessage
		if msg == "" {
			msg = w.Message
		}
		return fmt.Errorf("hubitat refused to delete %s %s: %s", kind, id, clean(msg))
	}
	return nil
}

// Backup downloads a database backup (/hub/backupDB?fileName=latest) and returns it. The hub
// writes the whole database first, so this waits up to 300 s as upstream does.
func (c *Client) Backup(ctx context.Context) ([]byte, error) {
	r, err := c.admin(ctx, http.MethodGet, "/hub/backupDB?fileName=latest", nil, c.backupWait)
	if err != nil {
		return nil, err
	}
	if len(r.Body) == 0 {
		return nil, errors.New("hubitat backup: the hub sent an empty file")
	}
	return r.Body, nil
}

// Reboot, Shutdown and ZWaveRepair post to the hub's maintenance routes; any reply is success.
func (c *Client) Reboot(ctx context.Context) error { return c.adminPost(ctx, "/hub/reboot") }

// Shutdown powers the hub off; it needs a power cycle to come back.
func (c *Client) Shutdown(ctx context.Context) error { return c.adminPost(ctx, "/hub/shutdown") }

// ZWaveRepair starts a Z-Wave network repair in the background: GET /hub/zwaveRepair2 as the
// C-7+ UI sends it, then the older GET /hub/zwaveRepair when the hub has no such route, as
// upstream's toolManageZwave (repair_start) does.
func (c *Client) ZWaveRepair(ctx context.Context) error {
	_, err := c.Admin(ctx, http.MethodGet, "/hub/zwaveRepair2?resetStats=false&maxHealth=10", nil)
	if IsStatus(err, http.StatusNotFound) {
		_, err = c.Admin(ctx, http.MethodGet, "/hub/zwaveRepair", nil)
	}
	return err
}

func (c *Client) adminPost(ctx context.Context, path string) error {
	_, err := c.Admin(ctx, http.MethodPost, path, url.Values{})
	return err
}

// HubInfo is the hub's description: model, firmware and where it is (for sunrise and sunset).
type HubInfo struct {
	Name             string  `json:"name"`
	Model            string  `json:"model,omitempty"`
	Firmware         string  `json:"firmwareVersion,omitempty"`
	IPAddress        string  `json:"ipAddress,omitempty"`
	UptimeSeconds    int64   `json:"uptime"`
	Location         string  `json:"location,omitempty"`
	Latitude         float64 `json:"latitude"`
	Longitude        float64 `json:"longitude"`
	TimeZone         string  `json:"timeZone,omitempty"`
	TemperatureScale string  `json:"temperatureScale,omitempty"`
	ZigbeeChannel    int     `json:"zigbeeChannel,omitempty"`
	ZWaveVersion     string  `json:"zwaveVersion,omitempty"`
}

// HubInfo is /hub2/hubData (an admin route; Maker API has no hub description). Numbers are
// read whether the firmware sends them as numbers or strings.
func (c *Client) HubInfo(ctx context.Context) (HubInfo, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub2/hubData", nil)
	if err != nil {
		return HubInfo{}, err
	}
	return ParseHubInfo(r.Body)
}

// ParseHubInfo reads a /hub2/hubData reply.
func ParseHubInfo(b []byte) (HubInfo, error) {
	var w struct {
		Name             string          `json:"name"`
		Model            string          `json:"model"`
		Firmware         string          `json:"firmwareVersion"`
		Version          string          `json:"version"` // what a real hub sends (upstream's captured shape)
		IPAddress        string          `json:"ipAddress"`
		Uptime           json.RawMessage `json:"uptime"`
		Location         string          `json:"location"`
		Latitude         json.RawMessage `json:"latitude"`
		Longitude        json.RawMessage `json:"longitude"`
		TimeZone         string          `json:"timeZone"`
		TemperatureScale string          `json:"temperatureScale"`
		ZigbeeChannel    json.RawMessage `json:"zigbeeChannel"`
		ZWaveVersion     string          `json:"zwaveVersion"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return HubInfo{}, fmt.Errorf("hubitat /hub2/hubData: malformed reply: %w", err)
	}
	h := HubInfo{Name: w.Name, Model: w.Model, Firmware: w.Firmware, IPAddress: w.IPAddress, Location: w.Location,
		TimeZone: w.TimeZone, TemperatureScale: w.TemperatureScale, ZWaveVersion: w.ZWaveVersion}
	if h.Firmware == "" {
		h.Firmware = w.Version
	}
	if f, ok := parseNumber(w.Uptime); ok {
		h.UptimeSeconds = int64(f)
	}
	if f, ok := parseNumber(w.Latitude); ok && f >= -90 && f <= 90 {
		h.Latitude = f
	}
	if f, ok := parseNumber(w.Longitude); ok && f >= -180 && f <= 180 {
		h.Longitude = f
	}
	if f, ok := parseNumber(w.ZigbeeChannel); ok && f >= 0 && f < 100 {
		h.ZigbeeChannel = int(f)
	}
	return h, nil
}
