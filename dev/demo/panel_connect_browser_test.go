package demo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPanelConnectTellsTheTruth: in the demo (external_url on loopback, plain http) the Connect page
// does not offer its address to claude.ai, says why and shows the ways to get a public address; no
// check that stayed on this machine is green; the snippets survive a phone: each -H of the curl
// snippet stays on one line with its value, and Claude Desktop's uses ~/.ssh/hamcp.
func TestPanelConnectTellsTheTruth(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	for _, v := range variants {
		within(t, tab, 10*time.Second, v.emulate()...)
		within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL), chromedp.WaitVisible(`#claude-ai`))
		waitJS(t, tab, "the checks", `document.getElementById('checks').dataset.done === 'yes'`)
		claude, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('claude-ai').textContent`))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"claude.ai cannot use", "https", "loopback", "Cloudflared", "additional_hosts", "Tailscale",
			"share_homeassistant", "reverse proxy", "X-Forwarded-Proto", "Nabu Casa"} {
			if !strings.Contains(claude, want) {
				t.Errorf("%s/%s: the claude.ai section does not say %q:\n%s", v.size, v.scheme, want, claude)
			}
		}
		if present, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`!!document.getElementById('claude-url')`)); present {
			t.Errorf("%s/%s: the page offers the loopback address to claude.ai", v.size, v.scheme)
		}
		green, _ := chromedp.Run(tab, chromedp.Evaluate[string](`[...document.querySelectorAll('#checks li')].filter(li => li.querySelector('.dot.ok')).map(li => li.innerText).join('\n')`))
		if green != "" {
			t.Errorf("%s/%s: green for checks that never left this machine:\n%s", v.size, v.scheme, green)
		}
		how, _ := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('#checks li .check-how').length`))
		if n, _ := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('#checks li').length`)); how != n || n == 0 {
			t.Errorf("%s/%s: %d of %d checks say how they were made", v.size, v.scheme, how, n)
		}
		// Each line of the curl snippet is one line box: nothing wraps inside it, so -H stays with its value.
		split, _ := chromedp.Run(tab, chromedp.Evaluate[string](`(() => {
			const pre = document.getElementById('curl'), text = pre.firstChild, lh = parseFloat(getComputedStyle(pre).lineHeight) || 18;
			const out = []; let at = 0;
			for (const line of text.nodeValue.split('\n')) {
				const r = document.createRange(); r.setStart(text, at); r.setEnd(text, at + line.length); at += line.length + 1;
				const tops = new Set([...r.getClientRects()].map(c => Math.round(c.top)));
				if (tops.size > 1) out.push(line);
			}
			return out.join(' | ') })()`))
		if split != "" {
			t.Errorf("%s/%s: the curl snippet wraps inside a line: %s", v.size, v.scheme, split)
		}
		hLines, _ := chromedp.Run(tab, chromedp.Evaluate[int](`document.getElementById('curl').textContent.split('\n').filter(l => /^\s*-H ["'][^"']+["'] \\$/.test(l)).length`))
		if hLines != 2 {
			t.Errorf("%s/%s: want each -H with its value on its own line, found %d such lines", v.size, v.scheme, hLines)
		}
	}
}
