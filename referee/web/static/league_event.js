// An event's page: local times, and a reload when the runner publishes a change to the event
// (a match created or finished, the event started or over), so its rounds fill in live.
(function () {
  "use strict";
  const POLL_MS = 4000;
  for (const el of document.querySelectorAll(".time[data-ms]")) {
    const ms = Number(el.dataset.ms);
    if (ms) el.textContent = new Date(ms).toISOString().replace("T", " ").slice(0, 19);
  }
  const data = JSON.parse(document.getElementById("event-data").textContent);
  if (data.status === "done" || data.status === "cancelled") return;
  const url = "/api/leagues/" + encodeURIComponent(data.league) + "/events/" +
    encodeURIComponent(data.event);
  function seen(ev) {
    return ev.status + ":" + ev.matches.map((m) => m.status).join(",");
  }
  let last = null;
  async function poll() {
    try {
      const r = await fetch(url, { cache: "no-store" });
      if (r.ok) {
        const ev = await r.json();
        const now = seen(ev);
        if (last !== null && now !== last) { location.reload(); return; }
        if (last === null && (ev.status !== data.status || ev.matches.length !== data.matches)) {
          location.reload(); return;
        }
        last = now;
      }
    } catch (e) { /* the next poll tries again */ }
    setTimeout(poll, POLL_MS);
  }
  setTimeout(poll, POLL_MS);
})();
