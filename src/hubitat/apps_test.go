package hubitat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/redact"
)

// appsListReply is /hub2/appsList as upstream's toolListInstalledApps walks it: ids as numbers or
// strings, names with the HTML Rule Machine decorates them with.
const appsListReply = `{"apps":[
 {"data":{"id":1,"name":"Rule Machine","type":"Rule Machine","disabled":false,"user":false,"hidden":false},"children":[
  {"data":{"id":"11","name":"Night Lights","type":"Rule-5.1","disabled":false},"children":[]},
  {"data":{"id":13,"name":"Porch &amp; Path <span style='color:red'>(Paused)</span>","type":"Rule-5.0"},"children":[]},
  {"data":{"id":14,"name":"Away <b>(Stopped)</b> (Required Expression false)","type":"Rule-5.1","disabled":true}}]},
 {"data":{"id":50,"name":"Ecobee Integration","type":"Ecobee Integration","user":false},"children":[]},
 {"data":{"id":"x","name":"broken"},"children":[]},
 {"data":{"id":60,"name":"Leak Alert","type":"Leak Alert","user":true},"children":[
  {"data":{"id":61,"name":"Helper","type":"Leak Alert","user":true,"hidden":true},"children":[]}]}]}`

func TestParseAppsList(t *testing.T) {
	t.Parallel()
	apps, err := ParseAppsList([]byte(appsListReply))
	if err != nil {
		t.Fatal(err)
	}
	want := []InstalledApp{
		{ID: 1, Name: "Rule Machine", Type: "Rule Machine", Children: 3},
		{ID: 11, Name: "Night Lights", Type: "Rule-5.1", ParentID: 1, ParentType: "Rule Machine"},
		{ID: 13, Name: "Porch & Path", Type: "Rule-5.0", Paused: true, ParentID: 1, ParentType: "Rule Machine"},
		{ID: 14, Name: "Away", Type: "Rule-5.1", Stopped: true, Disabled: true, ParentID: 1, ParentType: "Rule Machine"},
		{ID: 50, Name: "Ecobee Integration", Type: "Ecobee Integration"},
		{ID: 60, Name: "Leak Alert", Type: "Leak Alert", User: true, Children: 1},
		{ID: 61, Name: "Helper", Type: "Leak Alert", User: true, Hidden: true, ParentID: 60, ParentType: "Leak Alert"},
	}
	if len(apps) != len(want) {
		t.Fatalf("%d apps: %+v", len(apps), apps)
	}
	for i := range want {
		if apps[i] != want[i] {
			t.Errorf("app %d: %+v, want %+v", i, apps[i], want[i])
		}
	}
	engines := map[int64]string{1: "", 11: "Rule Machine", 50: "", 61: ""}
	for _, a := range apps {
		if e, ok := engines[a.ID]; ok && RuleEngine(a) != e {
			t.Errorf("app %d engine %q, want %q", a.ID, RuleEngine(a), e)
		}
	}
	for _, bad := range []string{`[]`, `{"list":[]}`, `<html>login</html>`, ``} {
		if _, err := ParseAppsList([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// configureReply is /installedapp/configure/json/<id> as upstream's toolGetAppConfig reads it.
const configureReply = `{"app":{"id":50,"label":"Ecobee <i>Integration</i>","trueLabel":"Ecobee Integration","disabled":false,"parentAppId":null,
 "appType":{"name":"Ecobee Integration","namespace":"hubitat"},"installed":true},
 "configPage":{"name":"mainPage","title":"<b>Ecobee</b>","install":true,"sections":[
  {"title":"Account","input":[
   {"name":"apiKey","type":"password","title":"API key","defaultValue":"s3cret"},
   {"name":"stats","type":"capability.thermostat","title":"Thermostats","defaultValue":true,"description":"Hallway"},
   {"name":"debug","type":"bool","title":"Debug","defaultValue":true},
   {"name":"poll","type":"enum","title":"Poll","options":["1","5"],"value":"5","description":"Click to set"}],
   "body":[{"element":"paragraph","description":"<p>Linked</p>"},{"title":"Click to set"}]}]},
 "settings":{"apiKey":"s3cret","poll":"5"},"childApps":[{"id":"51","label":"Child <span>(Paused)</span>","name":"Ecobee Child"}]}`

func TestParseAppConfig(t *testing.T) {
	t.Parallel()
	cfg, err := ParseAppConfig([]byte(configureReply))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(cfg)
	if strings.Contains(string(b), "s3cret") {
		t.Fatalf("the password is in %s", b)
	}
	in := cfg.Sections[0].Inputs
	if cfg.ID != 50 || cfg.Label != "Ecobee Integration" || cfg.Type != "Ecobee Integration" || cfg.PageTitle != "Ecobee" || cfg.SettingsCount != 2 ||
		in[0].Value != Redacted || in[1].Value != nil || in[1].Description != "Hallway" || in[2].Value != true || in[3].Value != "5" || in[3].Description != "" ||
		len(cfg.Sections[0].Paragraphs) != 1 || cfg.Sections[0].Paragraphs[0] != "Linked" ||
		len(cfg.Children) != 1 || cfg.Children[0] != (AppChild{ID: 51, Label: "Child", Type: "Ecobee Child"}) {
		t.Errorf("parsed %s", b)
	}
	for _, bad := range []string{`{}`, `{"app":{}}`, `{"app":{"id":1},"configPage":{"name":"x","error":"Page x not found"}}`, `nope`} {
		if _, err := ParseAppConfig([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := ParseAppConfig([]byte(`{"app":{"id":1},"configPage":{"name":"x","error":"Page x not found"}}`)); err == nil || !strings.Contains(err.Error(), "Page x not found") {
		t.Errorf("page error: %v", err)
	}
}

func TestParseAppDisabled(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{`{"disabled":true}`: true, `{"disabled":"true"}`: true, `{"disabled":false}`: false, `{"disabled":null}`: false} {
		if got, err := ParseAppDisabled([]byte(body)); err != nil || got != want {
			t.Errorf("%s: %v %v", body, got, err)
		}
	}
	for _, bad := range []string{`{}`, `{"disabled":"maybe"}`, `<html>`} {
		if _, err := ParseAppDisabled([]byte(bad)); err == nil {
			t.Errorf("%s read as a flag", bad)
		}
	}
}

// FuzzParseAppsList: any reply parses or fails cleanly; every app has a positive id, a
// parent that came before it, and a name without markup.
func FuzzParseAppsList(f *testing.F) {
	f.Add([]byte(appsListReply))
	f.Add([]byte(`{"apps":[{"data":{"id":1e300},"children":[{"data":{"id":-2}}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		apps, err := ParseAppsList(b)
		if err != nil {
			return
		}
		seen := map[int64]bool{}
		for _, a := range apps {
			if a.ID <= 0 || a.ParentID != 0 && !seen[a.ParentID] {
				t.Fatalf("app %+v", a)
			}
			if strings.ContainsAny(a.Name, "<>") && strings.Contains(a.Name, "<") && strings.Contains(a.Name[strings.Index(a.Name, "<"):], ">") {
				t.Fatalf("markup left in %q", a.Name)
			}
			seen[a.ID] = true
		}
	})
}

// FuzzParseAppConfig: any reply parses or fails cleanly, and a password input's value never
// comes out.
// TestParseAppConfigHidesTokens: what a page prints of a token, in text, in a link or in an input,
// is hidden; the rest of the sentence stays.
func TestParseAppConfigHidesTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, section, want string
	}{
		{"token alone", `"body":[{"description":"Access Token: 0b2c4e6a-1111-2222"}]`, "Access Token: [hidden]"},
		{"token in a link", `"body":[{"description":"Get All Devices:<br><a href='http://h/apps/api/7/devices?access_token=0b2c4e6a-1111-2222'>http://h/apps/api/7/devices?access_token=0b2c4e6a-1111-2222</a>"}]`,
			"Get All Devices: http://h/apps/api/7/devices?access_token=[hidden]"},
		{"token in a title", `"input":[{"name":"x","type":"bool","title":"Endpoint http://h/apps/api/14/trigger?access_token=0b2c4e6a-1111-2222"}]`,
			`"title":"Endpoint http://h/apps/api/14/trigger?access_token=[hidden]"`},
		{"a text input named like a secret", `"input":[{"name":"apiToken","type":"text","defaultValue":"0b2c4e6a-1111-2222"}]`, `"value":"***redacted***"`},
		{"a URL in a text input", `"input":[{"name":"webhook","type":"text","defaultValue":"https://x.example/hook?token=0b2c4e6a-1111-2222"}]`,
			`"value":"https://x.example/hook?token=[hidden]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseAppConfig([]byte(`{"app":{"id":7,"label":"A"},"configPage":{"name":"mainPage","sections":[{` + tc.section + `}]}}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(cfg)
			if strings.Contains(string(b), "0b2c4e6a-1111-2222") || !strings.Contains(string(b), tc.want) {
				t.Fatalf("want %s, token hidden:\n%s", tc.want, b)
			}
		})
	}
}

func FuzzParseAppConfig(f *testing.F) {
	f.Add([]byte(configureReply))
	f.Add([]byte(`{"app":{"id":7},"configPage":{"name":"mainPage","sections":[{"input":[{"name":"apiKey","type":"text","defaultValue":"k-123"}],` +
		`"body":[{"description":"Access Token: 0b2c-44"},{"description":"<a href='x'>http://h/apps/api/7/devices?access_token=0b2c-44</a>"}]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseAppConfig(b)
		if err != nil {
			return
		}
		for _, s := range cfg.Sections {
			for _, in := range s.Inputs {
				if (in.Type == "password" || redact.Key(in.Name)) && in.Value != nil && in.Value != Redacted {
					t.Fatalf("secret input %q value %v", in.Name, in.Value)
				}
			}
			for _, p := range s.Paragraphs {
				if !utf8.ValidString(p) && utf8.ValidString(string(b)) {
					t.Fatalf("paragraph %q", p)
				}
			}
		}
	})
}

const dashboardsReply = `[{"installedAppId":71,"name":"Main","version":"2.0","deviceIds":[1,"2"],"showHSMTile":true,"showModeTile":"true",
 "navigationSelection":"[72, 73]","theme":"dark","dashboardPin":"2468","hsmPin":"null"},
 {"id":"81","name":"Old","version":"1.0","deviceIds":"3,4"},{"name":"no id"}]`

func TestParseDashboards(t *testing.T) {
	t.Parallel()
	ds, err := ParseDashboards([]byte(dashboardsReply))
	if err != nil || len(ds) != 2 {
		t.Fatalf("%+v %v", ds, err)
	}
	m := ds[0]
	if m.ID != "71" || m.Kind != "easy" || strings.Join(m.DeviceIDs, ",") != "1,2" || !m.ShowHSMTile || !m.ShowModeTile || m.ShowClockTile ||
		strings.Join(m.NavigationSelection, ",") != "72,73" || m.Theme != "dark" || !m.DashboardPinSet || m.HSMPinSet {
		t.Errorf("easy: %+v", m)
	}
	if b, _ := json.Marshal(ds); strings.Contains(string(b), "2468") {
		t.Errorf("a PIN in %s", b)
	}
	if ds[1].ID != "81" || ds[1].Kind != "legacy" || strings.Join(ds[1].DeviceIDs, ",") != "3,4" {
		t.Errorf("legacy: %+v", ds[1])
	}
	if _, err := ParseDashboards([]byte(`{"dashboards":[]}`)); err == nil {
		t.Error("an object parsed as the list")
	}
}

func TestCheckHubVariable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, typ, value, field string }{
		{"Ok", "Number", "12", ""}, {"Ok", "Decimal", "1.5", ""}, {"Ok", "Boolean", "true", ""}, {"Ok", "String", "hi", ""},
		{"", "String", "x", "name"}, {"a[b", "String", "x", "name"}, {"Ok", "Date", "x", "type"}, {"Ok", "Number", "1.5", "value"},
		{"Ok", "Boolean", "yes", "value"}, {"Ok", "String", "", "value"},
		{"Ok", "DateTime", "2026-05-06T12:00", ""}, {"Ok", "DateTime", "2026-05-06 07:30:15", ""},
		{"Ok", "DateTime", "x", "value"}, {"Ok", "DateTime", "2026-05-06", "value"}, {"Ok", "DateTime", "2026-13-06T12:00", "value"},
		{"Ok", "DateTime", "2026-05-06T12:00:00-0400", "value"}, // an offset: the hub takes its own zone's time, so say it plainly
	} {
		err := CheckHubVariable(c.name, c.typ, c.value)
		if (err == nil) != (c.field == "") || err != nil && !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// FuzzParseDashboards: any reply parses or fails cleanly; ids are numbers and no PIN comes out.
func FuzzParseDashboards(f *testing.F) {
	f.Add([]byte(dashboardsReply))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseDashboards(b)
		if err != nil {
			return
		}
		for _, d := range ds {
			if !allDigits(d.ID) || d.Kind != "easy" && d.Kind != "legacy" {
				t.Fatalf("dashboard %+v", d)
			}
			out, _ := json.Marshal(d)
			if strings.Contains(string(out), `"dashboardPin"`) || strings.Contains(string(out), `"hsmPin"`) {
				t.Fatalf("a PIN field in %s", out)
			}
		}
	})
}

// FuzzParseLocationEvents: any reply parses or fails cleanly.
func FuzzParseLocationEvents(f *testing.F) {
	f.Add([]byte(`[{"name":"variable:WakeTime","value":"07:30","descriptionText":"WakeTime is 07:30","date":"2026-11-28T07:00:00.000+0000"},{"name":"mode","value":3}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := ParseLocationEvents(b)
		if err == nil && evs == nil {
			t.Fatal("nil list without an error")
		}
	})
}

func TestParseLocationEvents(t *testing.T) {
	t.Parallel()
	evs, err := ParseLocationEvents([]byte(`[{"name":"variable:A","value":"x y","date":"d"},{"name":"mode","value":3,"descriptionText":"m"}]`))
	if err != nil || len(evs) != 2 || evs[0] != (LocationEvent{Name: "variable:A", Value: "x y", Date: "d"}) || evs[1].Value != "3" || evs[1].Description != "m" {
		t.Errorf("%+v %v", evs, err)
	}
}

// FuzzHubVarMoment: a DateTime value reads as a date and a minute the hub's pickers take, or is
// refused with the value named.
func FuzzHubVarMoment(f *testing.F) {
	for _, s := range []string{"2026-05-06T12:00", "2026-05-06 07:30:15", "x", "2026-02-30T10:00", " 2026-05-06T12:00 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		date, clock, err := hubVarMoment(v)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "value ") {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		if _, err := time.Parse("2006-01-02 15:04", date+" "+clock); err != nil || len(date) != 10 || len(clock) != 5 {
			t.Fatalf("%q read as %q %q", v, date, clock)
		}
	})
}
