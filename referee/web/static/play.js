// The play page: one seat of a match played in the browser, through the same calls as a bot
// (GetView and SubmitMove: /api/play/<id> and /api/play/<id>/move, the seat token in the
// Authorization header only). The token arrives in the address's fragment (#token=...), which
// no request carries; it is moved to sessionStorage and off the address bar at once, so a
// reload keeps the seat and the token is never in a request line, a Referer or a log.
//
// The board is drawn by the game's renderer (RefereeBoards[game]); its elements that stand for
// a place where a move happens carry data-hit="<key>". RefereePlay.hits[game](kind, fields,
// view, seat) names the key of each legal move; the page lights the elements whose key some
// legal move has, and a click on one plays its move, or, when several moves share the place,
// opens a small chooser listing them. Moves that cannot be taken back once the turn moves on
// (RefereePlay.confirm[game]) ask first. The list of legal moves (grouped by kind, with the
// rule text) is always there, for the keyboard and screen readers.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const S = window.RefereeSVG;
  const opts = JSON.parse($("play-opts").textContent);
  const KEY = `referee-seat:${opts.id}`;

  // ---------------------------------------------------------------- the token
  const frag = new URLSearchParams(location.hash.slice(1));
  if (frag.has("token")) {
    sessionStorage.setItem(KEY, frag.get("token"));
    sessionStorage.setItem(`${KEY}:watch`, frag.get("watch") === "1" ? "1" : "0");
  }
  if (frag.has("token") || frag.has("watch")) {
    // off the address bar (and out of the history) before anything else is fetched
    history.replaceState(null, "", location.pathname + location.search +
      (sessionStorage.getItem(`${KEY}:watch`) === "1" ? "#watch=1" : ""));
  }
  if (frag.get("watch") === "1") sessionStorage.setItem(`${KEY}:watch`, "1");

  function seconds(ms) {
    const s = Math.max(0, ms) / 1000;
    if (s >= 60) return `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
    return s >= 10 ? `${Math.floor(s)} s` : `${s.toFixed(1)} s`;
  }
  const label = (k) => String(k || "").replace(/_/g, " ");

  const Play = {
    token: sessionStorage.getItem(KEY),
    watch: sessionStorage.getItem(`${KEY}:watch`) === "1",
    data: null,        // the last /api/play answer
    byKey: new Map(),  // board key -> legal moves there
    busy: false,       // a move is on its way
    clock: null, clockOffset: 0,
    fetches: 0, failures: 0, notesSince: 0,

    start() {
      if (!this.token) { this.askToken(); return; }
      $("token-form").hidden = true;
      if (this.watch) {
        $("moves").hidden = true;
        $("notes-box").hidden = false;
      }
      document.addEventListener("keydown", (e) => { if (e.key === "Escape") this.closeChooser(); });
      $("chooser-cancel").addEventListener("click", () => this.closeChooser());
      $("board").addEventListener("click", (e) => this.boardClick(e));
      $("board").addEventListener("keydown", (e) => {
        if ((e.key === "Enter" || e.key === " ") && e.target.closest && e.target.closest("[data-hit].lit")) {
          e.preventDefault();
          this.boardClick(e);
        }
      });
      this.refresh();
      this.follow();
      setInterval(() => this.tick(), 200);
      setInterval(() => { if (!this.busy) this.refresh(); }, 5000);  // a missed update, a lost feed
    },
    askToken() {
      const form = $("token-form");
      form.hidden = false;
      $("prompt").textContent = "This page needs your seat's token.";
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const t = $("token-input").value.trim();
        if (!t) return;
        sessionStorage.setItem(KEY, t);
        this.token = t;
        this.start();
      });
    },
    headers() { return {Authorization: `Bearer ${this.token}`}; },

    // ---------------------------------------------------------------- following the match
    follow() {
      // the spectators' public feed says when something changed (and the clocks); the seat's
      // own state is then asked again. EventSource reconnects by itself after a network loss.
      const es = new EventSource(`/api/matches/${opts.id}/live`);
      es.onmessage = (ev) => {
        const msg = JSON.parse(ev.data);
        if (msg.clock !== undefined) this.setClock(msg.clock, msg.now_ms);
        if (msg.type === "update" || msg.type === "game_over") this.refresh();
        if (msg.type === "game_over" || msg.type === "resync") {
          es.close();
          if (msg.type === "resync") setTimeout(() => this.follow(), 1000);
        }
      };
      es.onerror = () => { this.net("reconnecting…"); };
      es.onopen = () => { this.net(""); };
    },
    async refresh() {
      if (this.pending) { this.again = true; return; }
      this.pending = true;
      try {
        const r = await fetch(`/api/play/${opts.id}`, {headers: this.headers(), cache: "no-store"});
        const body = await r.json();
        if (!r.ok) {
          if (opts.state === "finished" && !this.data) {
            // an old match its referee no longer holds: its replay has everything
            $("prompt").innerHTML = `The match is over: <a href="/matches/${encodeURIComponent(opts.id)}">see its replay and result</a>.`;
            return;
          }
          this.showError(body);
          if (r.status === 401 || r.status === 403) { sessionStorage.removeItem(KEY); }
          return;
        }
        this.failures = 0;
        this.net("");
        this.fetches += 1;
        this.show(body);
        if (this.watch) this.fetchNotes();
      } catch (err) {
        this.failures += 1;
        this.net(`connection lost; trying again (${this.failures})…`);
        setTimeout(() => this.refresh(), Math.min(5000, 300 * this.failures));
      } finally {
        this.pending = false;
        if (this.again) { this.again = false; this.refresh(); }
      }
    },
    net(text) { const n = $("net"); n.textContent = text; n.hidden = !text; },

    // ---------------------------------------------------------------- drawing
    show(data) {
      const old = this.data;
      this.data = data;
      const d = data.decision;
      const seat = data.seat;
      $("whoami").textContent = `You play seat ${seat} (${data.names[seat] || "seat " + seat})` +
        (this.watch ? " — watching: a program plays this seat" : "");
      const st = $("state");
      st.textContent = data.state;
      st.className = `state ${data.state}`;
      for (const el of document.querySelectorAll(".seats .seat")) {
        el.classList.toggle("me", Number(el.dataset.seat) === seat);
        el.classList.toggle("to-act", data.view && Number(el.dataset.seat) === data.view.current_seat);
      }
      const sameBoard = old && old.version === data.version && !!old.decision === !!d;
      if (!sameBoard || !$("board").firstChild) this.drawBoard(data);
      this.drawPrompt(data);
      this.drawMoves(data);
      if (data.clock) this.setClock(data.clock, data.now_ms);
      else if (data.now_ms && !this.clock) this.clockOffset = data.now_ms - Date.now();
      if (data.game_over) this.drawResult(data);
    },
    drawBoard(data) {
      const board = $("board");
      const draw = window.RefereeBoards[opts.game];
      let html;
      try {
        html = draw ? draw(data.view, {names: data.names}, {viewer_seat: data.seat}) :
          `<pre>${S.esc(JSON.stringify(data.view, null, 1))}</pre>`;
      } catch (err) {
        html = `<pre class="render-error">cannot draw this view: ${S.esc(err)}</pre>`;
      }
      board.innerHTML = html;
      // the drawing is a picture for the viewer (role img hides its parts from screen readers);
      // here its lit places are buttons, so it is a group
      const svg = board.querySelector("svg");
      if (svg) svg.setAttribute("role", "group");
      board.dataset.version = String(data.version);
      this.closeChooser();
      this.light(data);
    },
    light(data) {
      this.byKey = new Map();
      const d = data.decision;
      const board = $("board");
      board.classList.toggle("deciding", !!d && !this.watch);
      if (!d || this.watch) return;
      const hits = (window.RefereePlay.hits || {})[opts.game];
      for (const m of d.moves) {
        const inner = m.move[opts.game] || {};
        const kind = Object.keys(inner)[0];
        let key = null;
        try { key = hits ? hits(kind, inner[kind] || {}, data.view, data.seat) : null; } catch (err) { key = null; }
        if (key === null || key === undefined) continue;
        if (!this.byKey.has(key)) this.byKey.set(key, []);
        this.byKey.get(key).push(m);
      }
      const found = new Set();
      for (const el of board.querySelectorAll("[data-hit]")) {
        const moves = this.byKey.get(el.dataset.hit);
        if (!moves || found.has(el.dataset.hit)) continue;
        found.add(el.dataset.hit);
        el.classList.add("lit");
        // a frame around the place, drawn over it (a transparent place shows no glow)
        if (el.getBBox) {
          const b = el.getBBox();
          const frame = document.createElementNS("http://www.w3.org/2000/svg", "rect");
          for (const [k, v] of Object.entries({x: b.x - 2, y: b.y - 2, width: b.width + 4, height: b.height + 4, rx: 5, class: "lit-frame"})) frame.setAttribute(k, String(v));
          el.appendChild(frame);
        }
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "button");
        el.setAttribute("aria-label", moves.length === 1 ? moves[0].text : `${moves.length} moves: ${moves.map((m) => m.text).join("; ")}`);
      }
      // moves whose place the board does not show: reachable from the list (and counted, so
      // a test finds a move the board cannot play)
      this.offBoard = d.moves.filter((m) => {
        for (const [k, ms] of this.byKey) if (found.has(k) && ms.includes(m)) return false;
        return true;
      });
      board.dataset.offBoard = String(this.offBoard.length);
    },
    drawPrompt(data) {
      const d = data.decision;
      const p = $("prompt");
      if (data.game_over) { p.textContent = `The match is over. ${data.game_over.summary || ""}`; return; }
      if (d && !this.watch) {
        p.textContent = `Your move: ${d.prompt || label(d.kind)}`;
        p.className = "prompt mine";
      } else {
        const cur = data.view ? data.view.current_seat : -1;
        p.textContent = d ? `${data.names[data.seat]} to move: ${d.prompt || label(d.kind)}` :
          cur >= 0 ? `Waiting for ${data.names[cur] || "seat " + cur}…` : "Waiting…";
        p.className = "prompt";
      }
    },
    drawMoves(data) {
      const box = $("move-list");
      const d = data.decision;
      const sig = d ? `${d.version}:${d.moves.length}` : "";
      if (box.dataset.sig === sig) return;
      box.dataset.sig = sig;
      box.innerHTML = "";
      if (!d || this.watch) {
        box.textContent = data.game_over ? "" : "Not your turn.";
        return;
      }
      const groups = new Map();
      for (const m of d.moves) {
        if (!groups.has(m.kind)) groups.set(m.kind, []);
        groups.get(m.kind).push(m);
      }
      for (const [kind, moves] of groups) {
        const fs = document.createElement("fieldset");
        fs.className = "move-group";
        const lg = document.createElement("legend");
        lg.textContent = `${label(kind)} (${moves.length})`;
        fs.appendChild(lg);
        const ul = document.createElement("ul");
        for (const m of moves) {
          const li = document.createElement("li");
          const b = document.createElement("button");
          b.type = "button";
          b.className = "move";
          b.dataset.moveId = m.id;
          b.textContent = m.text;
          if (m.rule) {
            const r = document.createElement("small");
            r.className = "rule";
            r.textContent = ` (${m.rule})`;
            b.appendChild(r);
            b.title = m.rule;
          }
          b.addEventListener("click", (e) => this.choose([m], e));
          li.appendChild(b);
          ul.appendChild(li);
        }
        fs.appendChild(ul);
        box.appendChild(fs);
      }
    },
    drawResult(data) {
      const box = $("result");
      const g = data.game_over;
      const names = data.names;
      const rows = (g.scores || []).map((s, i) => `<tr><td>${S.esc(names[i] || "seat " + i)}</td><td class="num">${S.esc(s)}</td><td class="num">${S.esc((g.ranks || [])[i] || "")}</td></tr>`).join("");
      box.innerHTML = `<h2>Result</h2><p class="summary">${S.esc(g.summary || "")}</p>` +
        (rows ? `<table><tr><th>seat</th><th class="num">score</th><th class="num">rank</th></tr>${rows}</table>` : "") +
        `<p><a href="/matches/${encodeURIComponent(opts.id)}">the match's replay</a></p>`;
      box.hidden = false;
      this.setClock(null);
    },
    showError(body) {
      const r = $("refusal");
      r.textContent = `${body.reason ? body.reason + ": " : ""}${body.error || "refused"}`;
      r.hidden = false;
    },

    // ---------------------------------------------------------------- choosing
    boardClick(e) {
      const el = e.target.closest && e.target.closest("[data-hit].lit");
      if (!el || this.busy) return;
      const moves = this.byKey.get(el.dataset.hit) || [];
      if (!moves.length) return;
      this.choose(moves, e, el);
    },
    choose(moves, e, el) {
      if (this.busy) return;
      if (moves.length === 1) {
        const m = moves[0];
        if (this.needsConfirm(m)) { this.openChooser([m], e, el, `Confirm: ${m.text}? This cannot be undone.`, true); return; }
        this.submit(m);
        return;
      }
      this.openChooser(moves, e, el, `Choose (${moves.length} moves here):`, false);
    },
    needsConfirm(m) {
      const c = (window.RefereePlay.confirm || {})[opts.game];
      const inner = m.move[opts.game] || {};
      return !!(c && c.has(Object.keys(inner)[0]));
    },
    openChooser(moves, e, el, title, confirming) {
      const ch = $("chooser");
      $("chooser-title").textContent = title;
      const list = $("chooser-list");
      list.innerHTML = "";
      for (const m of moves) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = confirming ? "choice confirm" : "choice";
        b.dataset.moveId = m.id;
        b.textContent = confirming ? "Confirm" : m.text;
        b.addEventListener("click", () => {
          if (!confirming && this.needsConfirm(m)) { this.openChooser([m], e, el, `Confirm: ${m.text}? This cannot be undone.`, true); return; }
          this.closeChooser();
          this.submit(m);
        });
        list.appendChild(b);
      }
      ch.hidden = false;
      // near the click (or the element), kept inside the window
      const r = el ? el.getBoundingClientRect() : (e && e.target && e.target.getBoundingClientRect ? e.target.getBoundingClientRect() : null);
      const x = e && e.clientX ? e.clientX : r ? r.left + r.width / 2 : 40;
      const y = e && e.clientY ? e.clientY : r ? r.bottom : 40;
      const w = ch.offsetWidth, h = ch.offsetHeight;
      ch.style.left = `${Math.max(4, Math.min(window.innerWidth - w - 4, x - w / 2)) + window.scrollX}px`;
      ch.style.top = `${Math.max(4, Math.min(window.innerHeight - h - 4, y + 12)) + window.scrollY}px`;
      this.returnFocus = document.activeElement;
      const first = list.querySelector("button");
      if (first) first.focus();
    },
    closeChooser() {
      const ch = $("chooser");
      if (ch.hidden) return;
      ch.hidden = true;
      if (this.returnFocus && this.returnFocus.focus) this.returnFocus.focus();
      this.returnFocus = null;
    },
    async submit(m) {
      const d = this.data && this.data.decision;
      if (!d || this.busy) return;
      this.busy = true;
      $("refusal").hidden = true;
      $("board").classList.add("sending");
      const body = {move: m.move, version: d.version,
                    request_id: `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`};
      try {
        for (let tries = 1; ; tries++) {
          const r = await fetch(`/api/play/${opts.id}/move`, {
            method: "POST", headers: {...this.headers(), "Content-Type": "application/json"},
            body: JSON.stringify(body), cache: "no-store"});
          const out = await r.json();
          if (r.status === 503 && tries <= 20) {
            // nothing was played (DRAINING: the referee stops for a restart; or its store is
            // away): the same move, request id and version again after Retry-After
            this.net(out.reason === "DRAINING" ? "the referee is restarting, retrying…"
              : `${out.reason || "unavailable"}: retrying…`);
            const wait = Math.min(30, Math.max(1, Number(r.headers.get("Retry-After")) || 2));
            await new Promise((done) => setTimeout(done, wait * 1000));
            continue;
          }
          this.net("");
          if (!r.ok) this.showError(out);
          break;
        }
      } catch (err) {
        // the answer was lost, not necessarily the move: the state says which
        this.net("connection lost while sending; checking the match…");
      } finally {
        this.busy = false;
        $("board").classList.remove("sending");
        this.refresh();
      }
    },

    // ---------------------------------------------------------------- clocks and notes
    setClock(clock, serverNow) {
      if (clock !== undefined) this.clock = clock && clock.move_ms ? clock : null;
      if (serverNow) this.clockOffset = serverNow - Date.now();
    },
    tick() {
      const c = this.clock;
      const data = this.data;
      const mine = data && data.decision;
      for (const el of document.querySelectorAll(".seats .seat")) {
        const box = el.querySelector(".seat-clock");
        const s = Number(el.dataset.seat);
        let text = "";
        if (data && !data.game_over && c) {
          const bank = (c.bank_left_ms || [])[s] || 0;
          text = c.bank_ms ? `bank ${seconds(bank)}` : "";
          const running = s === c.seat && c.deadline_ms > 0;
          if (running) {
            const left = c.deadline_ms - (Date.now() + this.clockOffset);
            text = `${seconds(left)} left` + (c.bank_ms ? ` (bank ${seconds(Math.min(bank, Math.max(0, left)))})` : "");
          }
          box.classList.toggle("running", running);
        } else if (data && !data.game_over && mine && mine.deadline_ms && s === data.seat) {
          text = `${seconds(mine.deadline_ms - (Date.now() + this.clockOffset))} left`;
          box.classList.add("running");
        }
        box.textContent = text;
        box.hidden = !text;
      }
    },
    async fetchNotes() {
      try {
        const r = await fetch(`/api/matches/${opts.id}/notes?since=${this.notesSince}`, {headers: this.headers(), cache: "no-store"});
        if (!r.ok) return;
        const body = await r.json();
        const ol = $("notes");
        for (const n of body.notes) {
          const li = document.createElement("li");
          li.textContent = `move ${n.n}: ${n.note}`;
          ol.appendChild(li);
          this.notesSince = Math.max(this.notesSince, n.n);
        }
      } catch (err) { /* the next update asks again */ }
    },
  };

  window.RefereePlay = window.RefereePlay || {hits: {}, confirm: {}};
  window.RefereePlay.page = Play;
  // the board modules register their hits before this script runs (they load first)
  Play.start();
})();
