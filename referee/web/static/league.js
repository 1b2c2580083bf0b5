// League and bot pages: local times, the standings refreshed from the JSON API, the upload form.
(function () {
  "use strict";
  const POLL_MS = 5000;
  function fmtTimes(root) {
    for (const el of (root || document).querySelectorAll(".time[data-ms]")) {
      const ms = Number(el.dataset.ms);
      if (ms) el.textContent = new Date(ms).toISOString().replace("T", " ").slice(0, 19);
    }
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  const KINDS = ["timeouts", "crashes", "refused", "forfeits"];
  function row(e, i) {
    const inc = e.incidents || {};
    const cell = el("td", { class: "incidents" });
    for (const k of KINDS) if (inc[k]) cell.append(el("span", { class: "incident " + k }, inc[k] + " " + k), " ");
    const rate = e.matches ? (e.win_rate !== undefined ? e.win_rate : e.wins / e.matches) : null;
    const tr = el("tr", { "data-bot": e.bot },
      el("td", { class: "num" }, i + 1),
      el("td", {}, el("a", { href: "/bots/" + encodeURIComponent(e.bot) }, e.bot)),
      el("td", { class: "num" }, e.version || "—"),
      el("td", { class: "num rating" }, e.rating.toFixed(2)),
      // the skill estimate with its own range: the rating (mu - 3 sigma) lies below it
      el("td", { class: "interval" }, e.mu.toFixed(1) + " (" + e.interval[0].toFixed(1) + " … " + e.interval[1].toFixed(1) + ")"),
      el("td", { class: "num" }, e.matches),
      el("td", { class: "num" }, rate === null ? "—" : (100 * rate).toFixed(0)),
      cell);
    return tr;
  }
  function draw(data) {
    const body = document.querySelector("#standings tbody");
    if (!body) return;
    const entries = (data.standings && data.standings.entries) || [];
    body.replaceChildren(...(entries.length ? entries.map(row)
      : [el("tr", { class: "empty" }, el("td", { colspan: "8" }, "No standings published yet."))]));
    const st = document.querySelector("#league-state .state");
    if (st) { st.textContent = data.state; st.className = "state " + data.state; }
    const reason = document.querySelector("#league-state .reason");
    if (reason) reason.textContent = data.reason || "";
    else if (data.reason && st) st.after(" ", el("span", { class: "reason" }, data.reason));
    const upd = document.getElementById("updated");
    if (upd && data.published_unix_ms) { upd.dataset.ms = data.published_unix_ms; fmtTimes(upd.parentNode); }
  }
  window.RefereeStandings = draw;  // the browser tests redraw from the API and compare
  // the challenges section, drawn by the server's own template: taken from a fresh copy of
  // this page whenever the runner publishes new standings (they carry the challenges)
  function redrawChallenges() {
    const box = document.getElementById("challenges-box");
    if (!box) return;
    fetch(location.pathname, { cache: "no-store" })
      .then((r) => (r.ok ? r.text() : null))
      .then((html) => {
        if (!html) return;
        const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("challenges-box");
        if (fresh) { box.replaceChildren(...fresh.childNodes); fmtTimes(box); }
      }).catch(() => {});
  }
  const opts = document.getElementById("league-data");
  if (opts) {
    const name = JSON.parse(opts.textContent).name;
    const upd = document.getElementById("updated");
    let published = upd ? String(upd.dataset.ms || "") : "";
    const poll = () => {
      if (document.hidden) return;
      fetch("/api/leagues/" + encodeURIComponent(name) + "/standings", { cache: "no-store" })
        .then((r) => (r.ok ? r.json() : null)).then((d) => {
          if (!d) return;
          draw(d);
          const now = String(d.published_unix_ms || "");
          if (now !== published) { published = now; redrawChallenges(); }
        }).catch(() => {});
    };
    setInterval(poll, POLL_MS);
  }
  // a hosted bot's upload: the token goes in a header, the file as the body, with progress
  const form = document.getElementById("upload-form");
  if (form) {
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const file = form.elements.file.files[0];
      const token = form.elements.token.value.trim();
      const out = document.getElementById("upload-result");
      const bar = document.getElementById("upload-progress");
      if (!file || !token) return;
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/bots/" + encodeURIComponent(form.dataset.bot) + "/upload");
      xhr.setRequestHeader("Authorization", "Bearer " + token);
      xhr.setRequestHeader("X-Filename", file.name.replace(/[^\x20-\x7e]/g, "_"));
      bar.hidden = false; bar.value = 0; out.textContent = "Uploading…"; out.className = "";
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = (100 * e.loaded) / e.total; };
      xhr.onload = () => {
        let d = {};
        try { d = JSON.parse(xhr.responseText); } catch (e) { d = { error: xhr.statusText }; }
        if (xhr.status === 200) {
          bar.value = 100;
          out.className = "ok";
          out.textContent = "Version " + d.version + " uploaded (" + d.files + " files, " + d.runtime +
            "): pending its check by the league. Reload to see it.";
          form.elements.token.value = "";
        } else {
          out.className = "error";
          out.textContent = "Refused (" + (d.reason || xhr.status) + "): " + (d.error || "");
        }
      };
      xhr.onerror = () => { out.className = "error"; out.textContent = "The upload failed (network)."; };
      xhr.send(file);
    });
  }
  fmtTimes();
})();
