package demo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPanelWordsSayWhatHappens: an assistant's unlock waits for the user. The card says it is this
// one action, once, with the lock's name; approving says exactly one action runs; the unlock then
// runs once and the same call asks again. A category grant is worded as one, and the Granted table
// names the client and when. A call without arguments shows none ("[]" nowhere).
func TestPanelWordsSayWhatHappens(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"approvals"), chromedp.WaitVisible(`#no-pending`))
	cs := sessionClient(t, e, nil)
	unlock := map[string]any{"domain": "lock", "service": "unlock", "entity_id": []string{"lock.front_door"}}
	te := asToolError(t, callJSON(t, cs, "ha_call_service", unlock, nil))
	if te.Error != "confirmation_required" {
		t.Fatalf("unlock: %+v", te)
	}
	waitJS(t, tab, "the confirmation request", `document.querySelectorAll('#pending article').length === 1`)
	card := bodyText(t, tab)
	for _, want := range []string{"this action, once", "Front Door (lock.front_door)", "APPROVE ONCE", "grants nothing else"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card does not say %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "use this permission") || strings.Contains(card, "[]") {
		t.Errorf("the card words a one-off confirmation as a permission, or shows []:\n%s", card)
	}
	press(t, tab, `#pending button[data-action="approve"]`)
	waitJS(t, tab, "the answer", `!!document.getElementById('flash')`)
	flash, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('flash').textContent`))
	if !strings.Contains(flash, "Approved once") || !strings.Contains(flash, "one time") || strings.Contains(flash, "permission") {
		t.Errorf("after approving one action the page says: %s", flash)
	}
	if res := callJSON(t, cs, "ha_call_service", unlock, nil); res.IsError {
		t.Fatalf("the approved unlock: %s", text(res))
	}
	if te := asToolError(t, callJSON(t, cs, "ha_call_service", unlock, nil)); te.Error != "confirmation_required" {
		t.Fatalf("the same unlock again ran without asking: %+v", te)
	}

	// A call without arguments shows no argument line at all.
	if te := asToolError(t, callJSON(t, cs, "ha_restart", map[string]any{}, nil)); te.Error != "confirmation_required" {
		t.Fatalf("ha_restart: %+v", te)
	}
	waitJS(t, tab, "the restart request", `[...document.querySelectorAll('#pending article')].some(a => a.innerText.includes('ha_restart'))`)
	if args, _ := chromedp.Run(tab, chromedp.Evaluate[int](`[...document.querySelectorAll('#pending article')].filter(a => a.innerText.includes('ha_restart') && a.querySelector('.args')).length`)); args != 0 {
		t.Errorf("ha_restart without arguments shows an argument line: %s", bodyText(t, tab))
	}

	// A category grant is worded as one.
	other := sessionClient(t, e, nil)
	te = asToolError(t, callJSON(t, other, "ha_execute_command", map[string]any{"command": "uptime"}, nil))
	waitJS(t, tab, "the command request", `[...document.querySelectorAll('#pending article')].some(a => a.innerText.includes('ha_execute_command'))`)
	shown := bodyText(t, tab)
	if !strings.Contains(shown, "command permission") || !strings.Contains(shown, "Approve lets that session use the command permission") {
		t.Errorf("a category request is not worded as one:\n%s", shown)
	}
	press(t, tab, `#pending article:last-of-type button[data-action="approve"]`)
	waitJS(t, tab, "the grant, its time shown locally", `!!document.querySelector('tr.grant[data-category="command"] time[title]')`)
	row, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('tr.grant[data-category="command"]').innerText`))
	if !strings.Contains(row, "demo-test/1") || !strings.Contains(row, "now") && !strings.Contains(row, "ago") {
		t.Errorf("the Granted row does not name the client and when: %q", row)
	}
	if strings.Contains(row, other.ID()) {
		t.Errorf("the Granted row shows the session id")
	}
}
