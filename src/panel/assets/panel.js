// The hamcp panel's little script: keeps the approval queue and its badge live without moving the
// keyboard focus, says when hamcp stops answering, shows times in the browser's time zone, runs the
// reachability checks and copies snippets. Everything works without it, only not live.
(function () {
  "use strict";
  const body = document.body;
  const base = body.dataset.base || "/";
  const poll = Math.max(500, parseInt(body.dataset.poll || "2000", 10));
  const announcer = document.getElementById("announce");
  const offline = document.getElementById("offline");

  function announce(text) {
    if (!announcer || !text) return;
    // Clearing first makes screen readers read the same sentence again when it repeats.
    announcer.textContent = "";
    setTimeout(() => { announcer.textContent = text; }, 50);
  }

  // ---- Times: the browser's zone, relative when recent, the full time on hover ----
  const rtf = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, {numeric: "auto", style: "short"}) : null;
  function relative(ms) {
    const s = Math.round(ms / 1000), a = Math.abs(s);
    if (!rtf || a >= 86400) return "";
    if (a < 45) return rtf.format(0, "second");
    if (a < 3600) return rtf.format(Math.round(s / 60), "minute");
    return rtf.format(Math.round(s / 3600), "hour");
  }
  function localTimes(root) {
    (root || document).querySelectorAll("time[datetime]").forEach(el => {
      const t = new Date(el.getAttribute("datetime"));
      if (isNaN(t)) return;
      const full = t.toLocaleString(undefined, {dateStyle: "medium", timeStyle: "medium"});
      el.title = full;
      el.textContent = relative(t - Date.now()) || full;
    });
  }
  localTimes();
  setInterval(localTimes, 30000);
  // Activity's "today" and from–to dates are the browser's days too: the filter form says its zone.
  const tzField = document.getElementById("filter-tz");
  if (tzField && !tzField.value && window.Intl) {
    try { tzField.value = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* hamcp's zone then */ }
  }

  // ---- Live updates that keep the focus where the user left it ----
  function keyOf(n) {
    return n.nodeType === 1 ? (n.id || n.getAttribute("data-key") || "") : "";
  }
  function syncAttributes(from, to) {
    for (const a of Array.from(from.attributes)) if (!to.hasAttribute(a.name)) from.removeAttribute(a.name);
    for (const a of Array.from(to.attributes)) if (from.getAttribute(a.name) !== a.value) from.setAttribute(a.name, a.value);
  }
  // morph makes from's children look like to's, reusing every node that is still there, so a
  // focused button that did not change is the same element afterwards.
  function morph(from, to) {
    const olds = Array.from(from.childNodes);
    const byKey = new Map();
    olds.forEach(n => { const k = keyOf(n); if (k) byKey.set(k, n); });
    const used = new Set();
    const wanted = Array.from(to.childNodes).map(n => {
      const k = keyOf(n);
      let old = k ? byKey.get(k) : olds.find(o => !used.has(o) && !keyOf(o) && o.nodeType === n.nodeType && o.nodeName === n.nodeName);
      if (!old || used.has(old) || old.nodeName !== n.nodeName) return n;
      used.add(old);
      if (old.isEqualNode(n)) return old;
      if (n.nodeType === 1) {
        syncAttributes(old, n);
        morph(old, n);
      } else {
        old.nodeValue = n.nodeValue;
      }
      return old;
    });
    olds.forEach(o => { if (!used.has(o)) o.remove(); });
    wanted.forEach((n, i) => {
      const at = from.childNodes[i];
      if (at !== n) from.insertBefore(n, at || null);
    });
  }
  function fromHTML(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  const badge = document.getElementById("pending-count");
  const pending = document.getElementById("pending");
  const grants = document.getElementById("grants");
  let version = pending ? pending.dataset.version : "";
  let lastCount = badge ? parseInt(badge.textContent, 10) || 0 : 0;
  let busy = false, failures = 0, downSince = null;

  function requests(root) {
    const out = new Map();
    root.querySelectorAll("article.request").forEach(a => out.set(a.id, a));
    return out;
  }
  function describe(article) {
    const tool = article.querySelector(".tool");
    const who = article.querySelector(".small.muted");
    return (who ? who.textContent.split(" · ")[0] : "An assistant") + " asks: " + (tool ? tool.textContent : "a request");
  }
  function updatePending(html) {
    const before = requests(pending);
    const active = document.activeElement;
    const activeCard = active && active.closest ? active.closest("article.request") : null;
    const next = activeCard ? activeCard.nextElementSibling : null;
    morph(pending, fromHTML(html));
    const after = requests(pending);
    const added = [...after.keys()].filter(id => !before.has(id));
    const gone = [...before.keys()].filter(id => !after.has(id));
    if (added.length) announce("New request. " + added.map(id => describe(after.get(id))).join(". "));
    else if (gone.length) announce(gone.length === 1 ? "A request was answered or expired." : gone.length + " requests were answered or expired.");
    localTimes(pending);
    // The focused request went away: move to the next one's Approve, else the section, never <body>.
    if (activeCard && !pending.contains(activeCard)) {
      const target = (next && pending.contains(next) && next.querySelector("button")) ||
        pending.querySelector("article.request button") || pending.closest("section").querySelector("h2");
      if (target) {
        if (target.tagName === "H2") target.tabIndex = -1;
        target.focus();
      }
    }
  }
  function setBadge(count) {
    if (!badge) return;
    badge.firstChild.nodeValue = String(count);
    badge.hidden = count === 0;
    if (count !== lastCount) announce(count === 0 ? "Nothing is waiting." : count === 1 ? "1 request waiting." : count + " requests waiting.");
    lastCount = count;
  }
  function setOffline(down) {
    if (!offline) return;
    if (down) {
      if (!downSince) downSince = new Date();
      offline.textContent = "hamcp is not answering since " + downSince.toLocaleTimeString(undefined, {timeStyle: "short"}) +
        ". What this page shows may be out of date; it retries by itself.";
      offline.hidden = false;
    } else if (!offline.hidden) {
      offline.hidden = true;
      downSince = null;
      announce("hamcp answers again.");
    }
  }
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const r = await fetch(base + "approvals/live?v=" + encodeURIComponent(version), {cache: "no-store", credentials: "same-origin"});
      if (!r.ok) throw new Error("HTTP " + r.status);
      const d = await r.json();
      failures = 0;
      setOffline(false);
      setBadge(d.count);
      if (pending && d.pending !== undefined && d.version !== version) {
        version = d.version;
        pending.dataset.version = version;
        updatePending(d.pending);
        if (grants) {
          morph(grants, fromHTML(d.grants));
          localTimes(grants);
        }
      }
    } catch (e) {
      // One miss can be a restart's blink; two in a row are worth saying.
      if (++failures >= 2) setOffline(true);
    } finally {
      busy = false;
    }
  }
  setInterval(refresh, poll);
  document.addEventListener("visibilitychange", refresh);

  // ---- Connect: what each check found, and from where ----
  const checks = document.getElementById("checks");
  if (checks && checks.dataset.src) {
    fetch(checks.dataset.src, {cache: "no-store", credentials: "same-origin"}).then(r => r.json()).then(d => {
      (d.checks || []).forEach((c, i) => {
        const li = checks.querySelector('[data-check="' + i + '"]');
        if (!li) return;
        const state = c.state || (c.ok ? "ok" : "bad");
        li.querySelector(".dot").className = "dot " + state;
        li.querySelector(".check-result").textContent =
          (state === "ok" ? "reachable" : state === "info" ? "answers here" : "not reachable") + " · " + c.detail;
        li.dataset.state = state;
      });
      checks.dataset.done = "yes";
    }).catch(() => {
      checks.querySelectorAll(".check-result").forEach(s => { s.textContent = "could not check"; });
      checks.dataset.done = "yes";
    });
  }

  // ---- Copy buttons beside every snippet ----
  document.querySelectorAll(".copy").forEach((el, i) => {
    const what = el.dataset.what || (el.tagName === "PRE" ? "snippet" : el.textContent.trim().slice(0, 40));
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button small";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy " + what);
    const status = document.createElement("span");
    status.className = "copy-status";
    status.setAttribute("role", "status");
    el.insertAdjacentElement("afterend", button);
    button.insertAdjacentElement("afterend", status);
    button.addEventListener("click", () => {
      const text = el.textContent;
      const done = msg => {
        status.textContent = msg;
        button.textContent = msg === "Copied" ? "Copied" : "Copy";
        setTimeout(() => { button.textContent = "Copy"; status.textContent = ""; }, 4000);
      };
      const manual = () => {
        const range = document.createRange();
        range.selectNodeContents(el);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        done("The browser blocked copying here: the text is selected, press Ctrl+C (⌘C on a Mac)");
      };
      if (!navigator.clipboard || !window.isSecureContext) return manual();
      navigator.clipboard.writeText(text).then(() => done("Copied"), manual);
    });
  });
})();
