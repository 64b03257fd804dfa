package hubitat

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func adminDo(t *testing.T, h *Hub, method, path, ctype, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, h.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestInstalledAppRoutes: behind Hub Security every new route sends the caller to /login as the
// hub does; without it they answer in the shapes upstream parses, with the hub's errors.
func TestInstalledAppRoutes(t *testing.T) {
	t.Parallel()
	secured := startHub(t, Options{Username: "u", Password: "p"})
	for _, route := range []string{"GET /hub2/appsList", "GET /installedapp/json/11", "GET /installedapp/configure/json/11",
		"POST /installedapp/disable", "POST /installedapp/btn", "POST /installedapp/update/json", "GET /logs/eventsJson", "GET /installedapp/statusJson/90",
		"GET /dashboard/select", "GET /dashboard/all", "GET /dashboard/create", "GET /dashboard/delete"} {
		method, path, _ := strings.Cut(route, " ")
		if status, _, hdr := adminDo(t, secured, method, path, "", ""); status != http.StatusFound || hdr.Get("Location") != "/login" {
			t.Errorf("%s without a session: %d %q", route, status, hdr.Get("Location"))
		}
	}

	h := startHub(t, Options{})
	if status, body, _ := adminDo(t, h, "GET", "/hub2/appsList", "", ""); status != 200 || !strings.HasPrefix(body, `{"apps":[{`) || !strings.Contains(body, `(Paused)`) {
		t.Errorf("appsList: %d %.200s", status, body)
	}
	if status, _, _ := adminDo(t, h, "GET", "/installedapp/configure/json/999", "", ""); status != http.StatusNotFound {
		t.Errorf("unknown app: %d", status)
	}
	// The enable/disable switch takes JSON, as the hub UI sends it; a form is refused.
	if status, _, _ := adminDo(t, h, "POST", "/installedapp/disable", "application/x-www-form-urlencoded", "id=50&disable=true"); status != http.StatusBadRequest {
		t.Errorf("form body: %d", status)
	}
	if status, _, _ := adminDo(t, h, "POST", "/installedapp/disable", "application/json", `{"id":50,"disable":true}`); status != 200 {
		t.Errorf("json body: %d", status)
	}
	if _, body, _ := adminDo(t, h, "GET", "/installedapp/json/50", "", ""); !strings.Contains(body, `"disabled":true`) {
		t.Errorf("read-back: %s", body)
	}
	// A button click needs the form the UI sends.
	if status, _, _ := adminDo(t, h, "POST", "/installedapp/btn", "application/x-www-form-urlencoded", "id=11&name=pausRule"); status != http.StatusBadRequest {
		t.Errorf("bare click: %d", status)
	}
	click := url.Values{"id": {"11"}, "name": {"pausRule"}, "settings[pausRule]": {"clicked"}, "pausRule.type": {"button"}}.Encode()
	adminDo(t, h, "POST", "/installedapp/btn", "application/x-www-form-urlencoded", click)
	if st, _ := h.InstalledApp(11); !st.Paused {
		t.Error("pausRule did not pause rule 11")
	}
	// /dashboard/all answers [] without the page's token.
	if _, body, _ := adminDo(t, h, "GET", "/dashboard/all", "", ""); strings.TrimSpace(body) != "[]" {
		t.Errorf("dashboards without the token: %s", body)
	}
	_, page, _ := adminDo(t, h, "GET", "/dashboard/select", "", "")
	tok := page[strings.Index(page, "globalDashboardPinToken = '")+len("globalDashboardPinToken = '"):]
	tok = tok[:strings.Index(tok, "'")]
	if _, body, _ := adminDo(t, h, "GET", "/dashboard/all?pinToken="+tok, "", ""); !strings.Contains(body, `"installedAppId":71`) {
		t.Errorf("dashboards with the token: %s", body)
	}
	h.EmitLocationEvent("variable:WakeTime", "08:00")
	if _, body, _ := adminDo(t, h, "GET", "/logs/eventsJson", "", ""); !strings.Contains(body, `"name":"variable:WakeTime"`) || !strings.Contains(body, `"value":"08:00"`) {
		t.Errorf("location events: %s", body)
	}
}

// TestHubVarWizardNeedsWarming: the Hub Variables app takes a click and does nothing until its
// page and its statusJson have both been read since the last settings write (upstream
// _primeHubVarsWizard); a DateTime variable commits on Done, in the hub's zone.
func TestHubVarWizardNeedsWarming(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	form := "application/x-www-form-urlencoded"
	click := func(name string) {
		adminDo(t, h, "POST", "/installedapp/btn", form, url.Values{"id": {"90"}, "name": {name}, "settings[" + name + "]": {"clicked"}, name + ".type": {"button"}, "currentPage": {"hubVar"}}.Encode())
	}
	write := func(key, typ, value string) {
		adminDo(t, h, "POST", "/installedapp/update/json", form, url.Values{"id": {"90"}, "settings[" + key + "]": {value}, key + ".type": {typ}, "currentPage": {"hubVar"}}.Encode())
	}
	page := func() string {
		_, body, _ := adminDo(t, h, "GET", "/installedapp/configure/json/90/hubVar", "", "")
		return body
	}
	status := func() string { _, body, _ := adminDo(t, h, "GET", "/installedapp/statusJson/90", "", ""); return body }

	click("moreVar")
	if strings.Contains(page(), `"hbVar"`) {
		t.Fatal("a cold wizard opened the create form")
	}
	click("moreVar") // the page alone does not warm it
	if strings.Contains(page(), `"hbVar"`) {
		t.Fatal("the page read alone warmed the wizard")
	}
	if body := status(); !strings.Contains(body, `"appState":[`) || !strings.Contains(body, `"appSettings":[`) {
		t.Fatalf("statusJson: %s", body)
	}
	click("moreVar")
	if !strings.Contains(page(), `"hbVar"`) {
		t.Fatal("a warmed wizard did not open the create form")
	}
	write("hbVar", "text", "AlarmDT")
	write("varType", "enum", "DateTime")
	if p := page(); !strings.Contains(p, `"varDate"`) || !strings.Contains(p, `"dateTimeDone"`) || strings.Contains(p, `"varValue"`) {
		t.Fatalf("the DateTime form: %s", p)
	}
	write("varDate", "date", "2026-07-04")
	write("varTime", "time", "06:45")
	click("dateTimeDone") // cooled by the writes: nothing
	if slices.Contains(h.HubVariableNames(), "AlarmDT") {
		t.Fatal("Done on a cooled wizard created the variable")
	}
	page()
	status()
	click("dateTimeDone")
	_, body, _ := adminDo(t, h, "GET", "/apps/api/"+h.AppID()+"/hubvariables?access_token="+h.Token(), "", "")
	if !strings.Contains(body, `"name":"AlarmDT"`) || !strings.Contains(body, `"value":"2026-07-04T06:45:00.000-0400"`) || !strings.Contains(body, `"type":"datetime"`) {
		t.Fatalf("the variable after Done: %s", body)
	}
}
