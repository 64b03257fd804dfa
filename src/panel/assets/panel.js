// The hamcp panel's little script: keeps the approval queue and its badge live, runs the
// reachability checks, and copies snippets on click. Everything works without it, only not live.
(function () {
  "use strict";
  const body = document.body;
  const base = body.dataset.base || "/";
  const poll = Math.max(500, parseInt(body.dataset.poll || "2000", 10));

  // Approvals: ask the server every few seconds; redraw only when something changed.
  const badge = document.getElementById("pending-count");
  const pending = document.getElementById("pending");
  const grants = document.getElementById("grants");
  let version = pending ? pending.dataset.version : "";
  let busy = false;
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const r = await fetch(base + "approvals/live?v=" + encodeURIComponent(version), {cache: "no-store", credentials: "same-origin"});
      if (!r.ok) return;
      const d = await r.json();
      if (badge) {
        badge.textContent = String(d.count);
        badge.hidden = d.count === 0;
      }
      if (pending && d.pending !== undefined && d.version !== version) {
        version = d.version;
        pending.dataset.version = version;
        pending.innerHTML = d.pending;
        if (grants) grants.innerHTML = d.grants;
      }
    } catch (e) {
      // Offline for a moment: the next tick tries again.
    } finally {
      busy = false;
    }
  }
  setInterval(refresh, poll);
  document.addEventListener("visibilitychange", refresh);

  // Connect: live reachability, one line per transport.
  const checks = document.getElementById("checks");
  if (checks && checks.dataset.src) {
    fetch(checks.dataset.src, {cache: "no-store", credentials: "same-origin"}).then(r => r.json()).then(d => {
      (d.checks || []).forEach((c, i) => {
        const li = checks.querySelector('[data-check="' + i + '"]');
        if (!li) return;
        li.querySelector(".dot").className = "dot " + (c.ok ? "ok" : "bad");
        li.querySelector(".check-result").textContent = (c.ok ? "reachable" : "not reachable") + " · " + c.detail;
        li.dataset.ok = c.ok ? "yes" : "no";
      });
      checks.dataset.done = "yes";
    }).catch(() => {
      checks.querySelectorAll(".check-result").forEach(s => { s.textContent = "could not check"; });
      checks.dataset.done = "yes";
    });
  }

  // Click a snippet to copy it (where the browser allows it inside Home Assistant's frame).
  document.addEventListener("click", e => {
    const el = e.target.closest(".copy");
    if (!el || !navigator.clipboard) return;
    navigator.clipboard.writeText(el.textContent).then(() => {
      el.classList.add("copied");
      setTimeout(() => el.classList.remove("copied"), 800);
    }).catch(() => {});
  });
})();
