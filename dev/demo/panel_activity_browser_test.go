package demo_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/store"
)

// TestPanelActivityUndo is a change undone from Activity: an assistant dims a light through
// ha_call_service, renames an automation and overwrites a file (with the filesystem permission), and
// opens the garage door; the user opens Activity, filters by kind and presses Undo on each. The light's
// brightness, the automation and the file are back; the garage door's undo asks first; an entry undone
// says by whom and offers no second Undo; a household member who is not an administrator is refused.
func TestPanelActivityUndo(t *testing.T) {
	t.Parallel()
	e := startDemo(t, func(c *config.Config) {
		c.PermissionFilesystem = "allow"
		// The assistant's confirm=true stands for the user's yes to the changes being undone here.
		c.ConfirmTrusted = []string{"change", "garage"}
	})
	ctx := context.Background()
	a := e.d.App
	model := sessionClient(t, e, nil)
	do := func(tool string, args map[string]any) {
		t.Helper()
		if res := callJSON(t, model, tool, args, nil); res.IsError {
			t.Fatalf("%s: %s", tool, text(res))
		}
	}
	const lamp, door = "light.hallway", "cover.garage_door"
	brightness := func() any {
		s, err := a.HA.State(ctx, lamp)
		if err != nil {
			t.Fatal(err)
		}
		return s.Attributes["brightness"]
	}
	do("ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{lamp}, "data": map[string]any{"brightness": 200}})
	// hamcp reads a call's targets from its live copy of the states: let it see the first change.
	testkit.Eventually(t, "the mirror at brightness 200", func() bool {
		s, ok := a.HA.Mirror().Get(lamp)
		return ok && s.Attributes["brightness"] == float64(200)
	})
	do("ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{lamp}, "data": map[string]any{"brightness": 30}})
	do("ha_create_automation", map[string]any{"id": "undo_in_panel", "confirm": true, "config": map[string]any{"alias": "Original",
		"triggers": []any{map[string]any{"trigger": "time", "at": "07:00:00"}}, "actions": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": lamp}}}}})
	do("ha_update_automation", map[string]any{"automation_id": "undo_in_panel", "merge": true, "confirm": true, "config": map[string]any{"alias": "Changed"}})
	file := filepath.Join(e.d.Home.Sandbox().Root, "config", "undo-in-panel.txt")
	do("ha_write_file", map[string]any{"path": "/config/undo-in-panel.txt", "content": "first"})
	do("ha_write_file", map[string]any{"path": "/config/undo-in-panel.txt", "content": "second"})
	do("ha_call_service", map[string]any{"domain": "cover", "service": "open_cover", "entity_id": []string{door}, "confirm": true})
	doorIs := func(states ...string) func() bool {
		return func() bool {
			s, err := a.HA.State(ctx, door)
			return err == nil && strings.Contains(" "+strings.Join(states, " ")+" ", " "+s.State+" ")
		}
	}
	testkit.Eventually(t, "the garage door open", doorIs("open", "opening"))
	alias := func() string {
		raw, err := a.HA.GetConfigItem(ctx, homeassistant.KindAutomation, "undo_in_panel")
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct{ Alias string }
		json.Unmarshal(raw, &cfg)
		return cfg.Alias
	}

	// The entries the user will press Undo on, as the log holds them (the writer is asynchronous).
	entryOf := func(tool, mentions string) int64 {
		var id int64
		testkit.Eventually(t, "the audit entry of "+tool+" "+mentions, func() bool {
			list, _, err := a.Store.ListAudit(ctx, store.AuditQuery{Tool: tool, Limit: 20})
			if err != nil {
				return false
			}
			for _, en := range list {
				if strings.Contains(en.Undo, mentions) && en.Outcome == store.OutcomeOK {
					id = en.ID
					return true
				}
			}
			return false
		})
		return id
	}
	lampEntry, doorEntry := entryOf("ha_call_service", lamp), entryOf("ha_call_service", door)
	automationEntry, fileEntry := entryOf("ha_update_automation", "undo_in_panel"), entryOf("ha_write_file", "undo-in-panel.txt")

	tab := panelTab(t)
	panelURL := e.d.Info.PanelURL
	within(t, tab, 20*time.Second, chromedp.Navigate(panelURL+"activity"), chromedp.WaitVisible(`#filters`))
	filterKind := func(kind string) {
		t.Helper()
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => {
			for (const s of document.querySelectorAll('#filters select')) s.value = '';
			const s = document.querySelector('#filters select[name="kind"]');
			if (![...s.options].some(o => o.value === `+jsString(kind)+`)) return false;
			s.value = `+jsString(kind)+`; document.querySelector('#filters button[type="submit"]').click(); return true })()`))
		if err != nil || !ok {
			t.Fatalf("kind %s is not offered: %v (%s)", kind, err, pageState(tab))
		}
		waitJS(t, tab, "the "+kind+" entries", `location.search.includes('kind=`+kind+`') && document.querySelectorAll('#audit tr.entry').length > 0`)
		// The form said the browser's zone, so the day filters are the user's days, and hamcp took it.
		if ok, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { const z = Intl.DateTimeFormat().resolvedOptions().timeZone;
			return !!z && new URLSearchParams(location.search).get('tz') === z && document.getElementById('filter-tz').value === z })()`)); !ok {
			t.Errorf("the filter did not carry the browser's time zone: %s", pageState(tab))
		}
		if all, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`[...document.querySelectorAll('#audit tr.entry')].every(r => r.dataset.kind === `+jsString(kind)+`)`)); !all {
			t.Errorf("kind=%s shows other kinds: %s", kind, pageState(tab))
		}
	}
	row := func(id int64) string { return `#audit tr[data-id="` + strconv.FormatInt(id, 10) + `"]` }
	undo := func(id int64) {
		t.Helper()
		press(t, tab, row(id)+` .undo-button`)
		waitJS(t, tab, "the undo done", `!!document.getElementById('undo-notice')`)
		waitJS(t, tab, "the entry marked undone", `!!document.querySelector('`+row(id)+` .undone')`)
		text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('`+row(id)+`').innerText`))
		if !strings.Contains(text, "undone by Demo Administrator at") || strings.Contains(text, "UNDO\n") {
			t.Errorf("the undone entry reads %q", text)
		}
		if again, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`!!document.querySelector('`+row(id)+` .undo-button')`)); again {
			t.Error("an undone entry still offers Undo")
		}
	}

	filterKind("device")
	undo(lampEntry)
	testkit.Eventually(t, "the light back at brightness 200", func() bool { return brightness() == float64(200) })

	filterKind("config")
	undo(automationEntry)
	if got := alias(); got != "Original" {
		t.Errorf("the automation is %q after the undo, want Original", got)
	}

	filterKind("file")
	undo(fileEntry)
	if b, _ := os.ReadFile(file); string(b) != "first" {
		t.Errorf("the file holds %q after the undo, want first", b)
	}

	// The garage door: Undo asks first, and nothing moves until the user says yes.
	filterKind("device")
	press(t, tab, row(doorEntry)+` .undo-button`)
	waitJS(t, tab, "the confirmation", `!!document.getElementById('undo-confirm')`)
	if q, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('undo-question').innerText`)); !strings.Contains(q, "close "+door) || !strings.HasSuffix(q, "Undo?") {
		t.Errorf("the confirmation asks %q", q)
	}
	if !doorIs("open", "opening")() {
		t.Fatal("the garage door moved before the user said yes")
	}
	press(t, tab, `#undo-yes`)
	waitJS(t, tab, "the confirmed undo done", `!!document.getElementById('undo-notice')`)
	testkit.Eventually(t, "the garage door closed", doorIs("closed", "closing"))

	// Every undo is in the log itself, by the panel user.
	undos, _, err := a.Store.ListAudit(ctx, store.AuditQuery{Tool: "undo"})
	if err != nil || len(undos) != 4 {
		t.Fatalf("%d undo entries, %v; want 4", len(undos), err)
	}
	for _, u := range undos {
		if u.Principal != "Demo Administrator" || u.Outcome != store.OutcomeOK {
			t.Errorf("undo entry %+v", u)
		}
	}

	// A household member who is not an administrator sees no Activity and cannot undo.
	var sam string
	for _, u := range e.d.Home.Model().Users() {
		if !u.IsAdmin {
			sam = u.ID
			break
		}
	}
	if sam == "" {
		t.Fatal("the simulated home has no household member who is not an administrator")
	}
	other := panelTab(t)
	within(t, other, 20*time.Second, asUser(sam), chromedp.Navigate(panelURL+"activity"), chromedp.WaitReady(`body`))
	if body := bodyText(t, other); !strings.Contains(body, "not an administrator") {
		t.Errorf("a non-administrator's Activity page says:\n%s", body)
	}
	if n, _ := chromedp.Run(other, chromedp.Evaluate[int](`document.querySelectorAll('.undo-button').length`)); n != 0 {
		t.Errorf("a non-administrator is offered %d Undo buttons", n)
	}
	status, err := chromedp.Run(other, chromedp.Evaluate[int](`fetch('activity/`+strconv.FormatInt(lampEntry, 10)+`/undo', {method: 'POST',
		headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'csrf=x'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Errorf("a non-administrator's undo: %d, %v; want 403", status, err)
	}
}

// asUser makes every request of the tab carry the ingress header Home Assistant sets for user id
// (the demo's panel believes it from loopback, as the add-on's does from the Supervisor).
func asUser(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Remote-User-Id": id}})
		return err
	})
}
