// The lobby (issue 33): a person's anonymous lobby identity kept in this browser
// (localStorage), seeks opened, joined and challenged through /api/lobby/..., and, once the match
// exists, the play page of the seat: /play/<match>#token=<seat token>. Tokens and invitation
// secrets travel in request bodies, headers and address fragments only, never in a request line.
(function () {
  "use strict";
  const KEY = "referee.lobby";
  const $ = (id) => document.getElementById(id);
  const err = $("seek-error");
  let current = null; // the seek this page waits for

  function stored() {
    try {
      const me = JSON.parse(localStorage.getItem(KEY) || "null");
      if (me && me.lobby_token && me.expires_unix_ms > Date.now() + 60000) return me;
    } catch (e) { /* a damaged entry: a new identity */ }
    return null;
  }

  function call(method, path, body, token) {
    const headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    return fetch(path, { method, headers, cache: "no-store",
                         body: body === undefined ? undefined : JSON.stringify(body) })
      .then((r) => r.json().then((d) => {
        if (!r.ok) throw new Error("Refused (" + (d.reason || d.status) + "): " + d.error);
        return d;
      }));
  }

  function identity(name) {
    const me = stored();
    if (me) return Promise.resolve(me);
    return call("POST", "/api/lobby/enter", { name: name || "" }).then((d) => {
      localStorage.setItem(KEY, JSON.stringify(d));
      return d;
    });
  }

  function showMe() {
    const me = stored();
    if ($("me") && me) $("me").textContent = "You are " + me.name + " in this lobby.";
  }

  function go(seek, tokens) {
    const t = tokens[0];
    location.assign("/play/" + encodeURIComponent(seek.match_id) + "#token=" +
                    encodeURIComponent(t.token));
  }

  function waitFor(reply, token) {
    const seek = reply.seek;
    const tokens = reply.seat_tokens || [];
    if (seek.state === "SEEK_FILLED" && tokens.length) { go(seek, tokens); return; }
    if (seek.state === "SEEK_FILLED") { say("The match started: " + seek.match_id); return; }
    if (seek.state !== "SEEK_OPEN") { say("The seek is " + seek.state.replace("SEEK_", "").toLowerCase() + "."); current = null; return; }
    current = { id: seek.seek_id, token, opener: reply.invitation !== undefined };
    const seated = (seek.seat_list || []).filter((s) => s.name).length;
    say("Waiting for players: " + seated + " of " + seek.seats + " seats taken.");
    call("GET", "/api/lobby/seeks/" + encodeURIComponent(seek.seek_id) + "?wait_ms=25000",
         undefined, token)
      .then((d) => waitFor(d, token))
      .catch((e) => { say(e.message); current = null; });
  }

  function say(text) {
    if (!$("waiting")) return;
    $("waiting").hidden = false;
    $("waiting-text").textContent = text;
  }

  function invite(secret) {
    if (!secret || !$("invite-box")) return;
    $("invite-link").textContent = location.origin + "/lobby/join#invite=" + secret;
    $("invite-box").hidden = false;
  }

  const form = $("seek-form");
  if (form) {
    showMe();
    // the seat count follows the game's range
    const seats = () => {
      const opt = form.elements.game.selectedOptions[0];
      const input = form.elements.seats;
      input.min = opt.dataset.min;
      input.max = opt.dataset.max;
      const n = parseInt(input.value, 10) || 0;
      input.value = String(Math.min(Math.max(n, +opt.dataset.min), +opt.dataset.max));
    };
    form.elements.game.addEventListener("change", seats);
    seats();
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      err.textContent = "";
      const el = form.elements;
      const body = { game: el.game.value, seats: parseInt(el.seats.value, 10) || 0,
                     preset: el.preset.value, rated: el.rated.checked,
                     bots_may_join: el.bots_may_join.checked, name: el.name.value.trim() };
      const bot = el.bot.value;
      let path = "/api/lobby/seeks";
      if (bot) { body.bot = bot; path = "/api/lobby/challenge"; } else body.private = el.private.checked;
      identity(body.name).then((me) => call("POST", path, body, me.lobby_token).then((d) => {
        showMe();
        invite(d.invitation);
        waitFor(d, me.lobby_token);
      })).catch((e) => { err.textContent = e.message; });
    });
    document.querySelectorAll("button.challenge").forEach((b) => b.addEventListener("click", () => {
      const row = b.closest("tr");
      form.elements.bot.value = row.dataset.bot;
      const games = (row.dataset.games || "").split(",").filter(Boolean);
      if (games.length && !games.includes(form.elements.game.value)) form.elements.game.value = games[0];
      form.requestSubmit();
    }));
    // Join buttons (the table is redrawn every few seconds: one listener on the table)
    const seeks = document.querySelector("#seeks tbody");
    seeks.addEventListener("click", (ev) => {
      const b = ev.target.closest("button.join");
      if (!b) return;
      err.textContent = "";
      const id = b.closest("tr").dataset.seek;
      identity(form.elements.name.value.trim()).then((me) =>
        call("POST", "/api/lobby/join", { seek_id: id, name: form.elements.name.value.trim() },
             me.lobby_token).then((d) => waitFor(d, me.lobby_token)))
        .catch((e) => { err.textContent = e.message; });
    });
    const cell = (text, cls) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      return td;
    };
    const redraw = (list) => {
      const rows = list.map((s) => {
        const tr = document.createElement("tr");
        tr.dataset.seek = s.seek_id;
        const taken = (s.seat_list || []).filter((x) => x.name).length;
        const b = document.createElement("button");
        b.type = "button"; b.className = "join"; b.textContent = "Join";
        const td = document.createElement("td");
        td.append(b);
        tr.append(cell(s.game), cell(taken + " / " + s.seats), cell(s.preset || "custom"),
                  cell(s.opener), td);
        return tr;
      });
      if (!rows.length) {
        const tr = document.createElement("tr");
        tr.className = "none";
        const td = cell("No open seek.", "muted");
        td.colSpan = 5;
        tr.append(td);
        rows.push(tr);
      }
      seeks.replaceChildren(...rows);
    };
    const refresh = () => {
      if (document.hidden) return;
      call("GET", "/api/lobby").then((d) => redraw(d.seeks || [])).catch(() => {});
    };
    setInterval(refresh, 5000);
    const copy = $("copy-invite");
    if (copy) copy.addEventListener("click", () => {
      if (navigator.clipboard) navigator.clipboard.writeText($("invite-link").textContent);
    });
    const cancel = $("cancel-seek");
    if (cancel) cancel.addEventListener("click", () => {
      if (!current) return;
      call("POST", "/api/lobby/seeks/" + encodeURIComponent(current.id) + "/cancel", {},
           current.token).then(() => { say("Cancelled."); current = null; })
        .catch((e) => { err.textContent = e.message; });
    });
  }

  const join = $("join-form");
  if (join) {
    // the secret is in the fragment (never sent by the browser); taken out of the address bar
    // and the history at once, so a shared screen or a back button does not show it again
    const secret = new URLSearchParams(location.hash.slice(1)).get("invite") || "";
    if (location.hash) history.replaceState(null, "", location.pathname);
    if (!secret) err.textContent = "This link holds no invitation.";
    join.addEventListener("submit", (ev) => {
      ev.preventDefault();
      err.textContent = "";
      const name = join.elements.name.value.trim();
      identity(name).then((me) => call("POST", "/api/lobby/join", { invitation: secret, name },
                                       me.lobby_token).then((d) => {
        join.hidden = true;
        waitFor(d, me.lobby_token);
      })).catch((e) => { err.textContent = e.message; });
    });
  }
})();
