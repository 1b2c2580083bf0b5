// The organizer page: the admin token stays in this tab's sessionStorage and goes out only as
// an Authorization header to this referee's /api/leagues/<name>/admin calls.
(function () {
  "use strict";
  const KEY = "referee-admin-token";
  const login = document.getElementById("admin-login");
  const panel = document.getElementById("admin-panel");
  const err = document.getElementById("admin-error");
  const league = login.dataset.league;
  const base = "/api/leagues/" + encodeURIComponent(league) + "/admin";
  const token = () => sessionStorage.getItem(KEY) || "";
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) { if (k === "class") e.className = v; else e.setAttribute(k, v); }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  function call(path, body) {
    const init = { headers: { Authorization: "Bearer " + token() }, cache: "no-store" };
    if (body !== undefined) { init.method = "POST"; init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(base + path, init).then((r) => r.json().then((d) => {
      if (!r.ok) throw new Error("Refused (" + (d.reason || d.status) + "): " + d.error);
      return d;
    }));
  }
  const fmt = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "never");
  function show(h) {
    err.textContent = "";
    panel.hidden = false;
    const lg = h.league;
    const st = document.getElementById("admin-state");
    st.replaceChildren(el("span", { class: "state " + lg.state }, lg.state), lg.reason ? " " + lg.reason : "");
    const rows = [
      ["last standings published", fmt(h.standings_unix_ms)],
      ["running matches", h.running_matches],
      ["connected sessions", h.connected_sessions],
      ["versions waiting for their check", h.versions_pending],
      ["open invites", h.invites_open],
      ["runner's last error", (h.runner_health && h.runner_health.last_error) || "—"],
    ];
    document.querySelector("#health tbody").replaceChildren(...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", { class: "num" }, v))));
    const body = document.querySelector("#admin-bots tbody");
    body.replaceChildren(...h.bots.map((b) => {
      const acts = el("td", { class: "actions" });
      const act = (label, status, cls) => {
        const btn = el("button", { type: "button", "data-bot": b.name, "data-status": status, class: cls || "" }, label);
        btn.addEventListener("click", () => {
          if (status === "removed" && !confirm("Remove " + b.name + "? Its token stops working.")) return;
          call("/bots/" + encodeURIComponent(b.name), { status: status, message: "" }).then(refresh, (e) => { err.textContent = e.message; });
        });
        acts.append(btn, " ");
      };
      if (b.status === "pending") act("Approve", "active");
      if (b.status === "active") act("Disable", "disabled");
      if (b.status === "disabled" || b.status === "removed") act("Enable", "active");
      if (b.status !== "removed") act("Remove", "removed", "danger");
      return el("tr", { "data-bot": b.name },
        el("td", {}, el("a", { href: "/bots/" + encodeURIComponent(b.name) }, b.name)),
        el("td", {}, b.kind), el("td", {}, b.owner || ""),
        el("td", {}, el("span", { class: "state bot-" + b.status }, b.status), b.message ? " " + b.message : ""),
        el("td", {}, b.kind === "remote" ? (b.connected ? "connected" : "—") : ""),
        el("td", { class: "num" }, b.versions), acts);
    }));
  }
  function refresh() {
    if (!token()) return;
    call("").then(show, (e) => { err.textContent = e.message; panel.hidden = true; });
  }
  login.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(KEY, login.elements.token.value.trim());
    login.elements.token.value = "";
    refresh();
  });
  document.getElementById("admin-forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY); panel.hidden = true;
  });
  for (const btn of document.querySelectorAll("button[data-state]")) {
    btn.addEventListener("click", () => {
      call("/state", { state: btn.dataset.state, reason: document.getElementById("state-reason").value })
        .then(refresh, (e) => { err.textContent = e.message; });
    });
  }
  document.getElementById("invite-create").addEventListener("click", () => {
    const uses = Number(document.getElementById("invite-uses").value) || 1;
    const hours = Number(document.getElementById("invite-hours").value) || 0;
    call("/invites", { uses: uses, valid_s: Math.round(hours * 3600) }).then((d) => {
      document.getElementById("invite-code").textContent = d.code;
      document.getElementById("invite-box").hidden = false;
      refresh();
    }, (e) => { err.textContent = e.message; });
  });
  refresh();
  setInterval(() => { if (!document.hidden) refresh(); }, 5000);
})();
