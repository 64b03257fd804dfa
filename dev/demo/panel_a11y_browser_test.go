package demo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/hamcp/hamcp/dev/demo"
	"github.com/hamcp/hamcp/src/permission"
)

// a11yAudit lists what a page gets wrong for people who read it with low vision, a keyboard or a
// finger: not exactly one h1, text below 4.5:1 contrast (3:1 for large text) against what is really
// behind it, and (on a phone) controls smaller than 44 px. Disabled controls and visually hidden
// text are exempt, as WCAG exempts them.
const a11yAudit = `(() => {
  const out = [];
  const h1 = document.querySelectorAll('h1').length;
  if (h1 !== 1) out.push(h1 + ' h1 elements');
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(parseFloat); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const over = (top, bottom) => ({r: top.r*top.a + bottom.r*(1-top.a), g: top.g*top.a + bottom.g*(1-top.a), b: top.b*top.a + bottom.b*(1-top.a), a: 1});
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v/12.92 : Math.pow((v+0.055)/1.055, 2.4); };
    return 0.2126*f(c.r) + 0.7152*f(c.g) + 0.0722*f(c.b); };
  const behind = el => { const chain = []; for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let c = {r: 255, g: 255, b: 255, a: 1};
    for (const e of chain) { const b = parse(getComputedStyle(e).backgroundColor); if (b && b.a > 0) c = over(b, c); }
    return c; };
  const seen = new Set();
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!n.nodeValue.trim() || seen.has(el)) continue;
    seen.add(el);
    if (el.closest('[disabled], .visually-hidden, [hidden], option, script, style')) continue;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
    const cs = getComputedStyle(el);
    const bg = behind(el), fg = over(parse(cs.color), bg);
    const l1 = lum(fg), l2 = lum(bg), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) out.push('contrast ' + ratio.toFixed(2) + ' < ' + need + ': "' + n.nodeValue.trim().slice(0, 30) + '" (' + el.tagName.toLowerCase() + '.' + el.className + ')');
  }
  if (window.innerWidth <= 500) {
    for (const el of document.querySelectorAll('button, select, .tabs a, .pager a, a.button, details.guide summary')) {
      if (el.disabled || !el.getClientRects().length) continue;
      const r = el.getBoundingClientRect();
      if (r.height < 43.5 || r.width < 43.5) out.push('tap target ' + Math.round(r.width) + 'x' + Math.round(r.height) + ': ' + el.tagName.toLowerCase() + ' "' + el.textContent.trim().slice(0, 20) + '"');
    }
  }
  return out.slice(0, 12).join('\n');
})()`

// TestPanelIsAccessibleEverywhere audits every panel page, the approval page, the error pages and the
// refusal page at desktop and phone size, light and dark.
func TestPanelIsAccessibleEverywhere(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	// Something on every page: a waiting request with a link to the approval page, a grant, audit entries.
	plain := sessionClient(t, e, nil)
	te := asToolError(t, callJSON(t, plain, "ha_execute_command", map[string]any{"command": "uptime"}, nil))
	link, _ := te.Details["approval_url"].(string)
	other := sessionClient(t, e, nil)
	te = asToolError(t, callJSON(t, other, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, nil))
	id, _ := te.Details["request_id"].(string)
	if err := e.d.App.Permissions.Approve(context.Background(), id, permission.Approver{Via: permission.ViaPanel, UserID: demo.DemoUser.ID, Name: demo.DemoUser.DisplayName}); err != nil {
		t.Fatal(err)
	}
	panelURL := e.d.Info.PanelURL
	pages := []struct{ name, url, ready string }{
		{"connect", panelURL, `document.getElementById('checks').dataset.done === 'yes'`},
		{"approvals", panelURL + "approvals", `document.querySelectorAll('#pending article').length === 1`},
		{"clients", panelURL + "clients", `!!document.querySelector('h1')`},
		{"activity", panelURL + "activity", `document.querySelectorAll('#audit tr.entry').length > 0`},
		{"status", panelURL + "status", `!!document.getElementById('version') && document.body.innerText.includes('Hubitat')`},
		{"404", panelURL + "no/such/page", `!!document.getElementById('back')`},
	}
	for _, v := range variants {
		size, scheme := v.size, v.scheme
		within(t, tab, 10*time.Second, v.emulate()...)
		for _, pg := range pages {
			within(t, tab, 20*time.Second, chromedp.Navigate(pg.url), chromedp.WaitReady(`body`))
			waitJS(t, tab, pg.name+"'s content", pg.ready)
			if bad, err := chromedp.Run(tab, chromedp.Evaluate[string](a11yAudit)); err != nil || bad != "" {
				t.Errorf("%s, %s, %s:\n%s%v", pg.name, size, scheme, bad, err)
			}
		}
	}
	// The approval page, through the Home Assistant login once, then in every look.
	login := e.d.Info.Logins[0]
	within(t, tab, 10*time.Second, variants[0].emulate()...)
	within(t, tab, 20*time.Second, chromedp.Navigate(link), chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, login.Username), chromedp.SendKeys(`#password`, login.Password), chromedp.Click(`button[type=submit]`))
	waitJS(t, tab, "the approval page", `!!document.getElementById('warning')`)
	for _, v := range variants {
		within(t, tab, 10*time.Second, v.emulate()...)
		if bad, err := chromedp.Run(tab, chromedp.Evaluate[string](a11yAudit)); err != nil || bad != "" {
			t.Errorf("approval page, %s, %s:\n%s%v", v.size, v.scheme, bad, err)
		}
		bg, _ := chromedp.Run(tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('main')).backgroundColor`))
		if want := map[string]string{"light": "rgb(255, 255, 255)", "dark": "rgb(28, 28, 28)"}[v.scheme]; bg != want {
			t.Errorf("the approval page's card in %s mode is %s, want the panel's %s", v.scheme, bg, want)
		}
	}
}

// look is one way people see the panel: a desktop or a phone, light or dark.
type look struct {
	size, scheme  string
	width, height int64
}

var variants = []look{{"desktop", "light", 1280, 800}, {"desktop", "dark", 1280, 800}, {"phone", "light", 390, 844}, {"phone", "dark", 390, 844}}

func (l look) emulate() []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(l.width, l.height, func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		p.Mobile = l.size == "phone"
	}), colorScheme(l.scheme)}
}

// timeZone makes the page see the time zone tz.
func timeZone(tz string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: tz})
		return err
	})
}

// TestPanelKeepsFocusAcrossLiveUpdates: a keyboard user on request A's Approve stays there while
// request B arrives and leaves; the arrivals are announced; when A itself goes, focus lands on the
// section, never on <body>.
func TestPanelKeepsFocusAcrossLiveUpdates(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"approvals"), chromedp.WaitVisible(`#no-pending`))
	a := sessionClient(t, e, nil)
	te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "uptime"}, nil))
	idA, _ := te.Details["request_id"].(string)
	waitJS(t, tab, "request A", `document.querySelectorAll('#pending article').length === 1`)
	// The same element keeps the focus (a marked node), not a new button in its place: a screen
	// reader would read the page from the top again.
	focusA := `document.activeElement && document.activeElement.hamcpMarked === true && document.activeElement.dataset.id === '` + idA + `'`
	if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { const b = document.querySelector('#req-`+idA+` button[data-action="approve"]');
		b.hamcpMarked = true; b.focus(); return `+focusA+` })()`)); err != nil || !ok {
		t.Fatalf("could not focus A's Approve: %v", err)
	}
	b := sessionClient(t, e, nil)
	te = asToolError(t, callJSON(t, b, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, nil))
	idB, _ := te.Details["request_id"].(string)
	waitJS(t, tab, "request B", `document.querySelectorAll('#pending article').length === 2`)
	waitJS(t, tab, "the announcement of B", `document.getElementById('announce').textContent.includes('New request')`)
	if ok, _ := chromedp.Run(tab, chromedp.Evaluate[bool](focusA)); !ok {
		t.Fatalf("B's arrival moved the focus off A's Approve to %s", activeDesc(tab))
	}
	if n, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('pending-count').firstChild.nodeValue`)); n != "2" {
		t.Errorf("the badge says %q, want 2", n)
	}
	by := permission.Approver{Via: permission.ViaPanel, UserID: demo.DemoUser.ID, Name: demo.DemoUser.DisplayName}
	if err := e.d.App.Permissions.Deny(context.Background(), idB, by); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tab, "B gone", `document.querySelectorAll('#pending article').length === 1`)
	if ok, _ := chromedp.Run(tab, chromedp.Evaluate[bool](focusA)); !ok {
		t.Fatalf("B's leaving moved the focus off A's Approve to %s", activeDesc(tab))
	}
	if err := e.d.App.Permissions.Deny(context.Background(), idA, by); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tab, "A gone", `document.querySelectorAll('#pending article').length === 0`)
	waitJS(t, tab, "the focus on the section", `document.activeElement !== document.body && document.activeElement.closest('section') !== null`)
}

func activeDesc(tab context.Context) string {
	s, _ := chromedp.Run(tab, chromedp.Evaluate[string](`(() => { const a = document.activeElement; return a ? a.tagName + ' ' + (a.id || a.className) + ' ' + a.textContent.slice(0, 30) : 'nothing' })()`))
	return s
}

// TestPanelTimesAreLocal: times show in the browser's time zone, relative when recent, with the full
// local time on hover.
func TestPanelTimesAreLocal(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	within(t, tab, 10*time.Second, timeZone("Pacific/Auckland"))
	plain := sessionClient(t, e, nil)
	asToolError(t, callJSON(t, plain, "ha_execute_command", map[string]any{"command": "uptime"}, nil))
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"activity"), chromedp.WaitVisible(`#audit`))
	waitJS(t, tab, "the script's local times", `!!document.querySelector('#audit time[title]')`)
	got, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => { const t = document.querySelector('#audit time');
		const d = new Date(t.getAttribute('datetime'));
		const local = d.toLocaleString(undefined, {dateStyle: 'medium', timeStyle: 'medium'});
		return [t.textContent, t.title === local ? 'title-local' : 'title ' + t.title + ' != ' + local,
			Intl.DateTimeFormat().resolvedOptions().timeZone].join('|') })()`))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(got, "|")
	if len(parts) != 3 || parts[2] != "Pacific/Auckland" || parts[1] != "title-local" || strings.Contains(parts[0], "UTC") ||
		!(strings.Contains(parts[0], "now") || strings.Contains(parts[0], "ago") || strings.Contains(parts[0], "sec")) {
		t.Errorf("the newest audit time shows %q; want a relative time with the local time (Pacific/Auckland) on hover", got)
	}
}

// TestPanelSaysWhenHamcpStopsAnswering: an open panel whose hamcp went away says so instead of
// "Nothing is waiting".
func TestPanelSaysWhenHamcpStopsAnswering(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"approvals"), chromedp.WaitVisible(`#no-pending`))
	if hidden, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById('offline').hidden`)); !hidden {
		t.Fatal("the offline banner shows while hamcp answers")
	}
	e.d.StopPanel()
	waitJS(t, tab, "the offline banner", `!document.getElementById('offline').hidden && document.getElementById('offline').textContent.includes('not answering')`)
	if role, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('offline').getAttribute('role')`)); role != "alert" {
		t.Errorf("the banner's role is %q, want alert", role)
	}
}

// TestPanelErrorPagesLeadBack: an unknown address and a stale form get a page in the panel's
// layout that says what happened and links back, with the same status codes as before.
func TestPanelErrorPagesLeadBack(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"nothing-here"), chromedp.WaitVisible(`#back`))
	if body := bodyText(t, tab); !strings.Contains(body, "No such page") {
		t.Errorf("the 404 page says:\n%s", body)
	}
	// A stale form: the CSRF token of an earlier page (here, none at all) is refused with a way back.
	resp, err := http.PostForm(e.d.Info.PanelURL+"grants/revoke", url.Values{"csrf": {"stale"}, "session": {"x"}, "category": {"command"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		page.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(page.String(), "This form was stale") ||
		!strings.Contains(page.String(), `id="back" href="/approvals"`) {
		t.Errorf("a stale form: %d\n%s", resp.StatusCode, page.String())
	}
	within(t, tab, 10*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"nothing-here"), chromedp.WaitVisible(`#back`))
	press(t, tab, `#back`)
	waitJS(t, tab, "the Connect page", `!!document.getElementById('checks')`)
}

// TestPanelCopyButtons: every snippet has a visible Copy button that says it copied, and says what
// to do where the browser refuses.
func TestPanelCopyButtons(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL), chromedp.WaitVisible(`#curl`))
	n, err := chromedp.Run(tab, chromedp.Evaluate[string](`JSON.stringify([document.querySelectorAll('.copy').length,
		document.querySelectorAll('.copy + button.copy-button').length,
		[...document.querySelectorAll('button.copy-button')].filter(b => b.getClientRects().length && b.getAttribute('aria-label').startsWith('Copy')).length])`))
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	if err := json.Unmarshal([]byte(n), &counts); err != nil || counts[0] == 0 || counts[1] != counts[0] || counts[2] != counts[0] {
		t.Fatalf("snippets, buttons beside them, visible labelled buttons: %s", n)
	}
	press(t, tab, `#curl + button.copy-button`)
	waitJS(t, tab, "the copy's confirmation", `(() => { const s = document.querySelector('#curl + button + .copy-status').textContent;
		return s === 'Copied' || s.includes('press Ctrl+C') })()`)
}
