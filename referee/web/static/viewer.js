// The match viewer: a live board fed by server-sent events, then a replay with a move scrubber.
// The same code runs the live page, the replay page and the static replay page of a tournament
// report (there the frames are embedded in the page: no server needed).
//
// Board renderers: window.RefereeBoards[game](view, meta, ctx) returns the board's HTML, where
// ctx = {v, seat, events, prev, viewer_seat}: the frame's state version, who acted last (-1: the
// referee), that frame's events ({kind, text, data}), the previous frame's view (or null) and
// whose view is shown (null: the spectator's; a seat number; "reveal" for the final views of
// the reveal). A renderer must also work with ctx undefined.
(function () {
  "use strict";
  // Patches made by referee/web/frames.py:diff.
  function patch(a, p) {
    if (p === null || p === undefined) return a;
    if ("=" in p) return p["="];
    if ("n" in p) {
      const out = (a || []).slice(0, p.n);
      for (const k of Object.keys(p.i)) {
        const i = Number(k);
        out[i] = patch(i < out.length ? out[i] : null, p.i[k]);
      }
      return out;
    }
    const out = Object.assign({}, a);
    for (const k of p.x || []) delete out[k];
    for (const k of Object.keys(p.o || {})) out[k] = patch(out[k], p.o[k]);
    return out;
  }

  const $ = (id) => document.getElementById(id);
  const esc = (s) => window.RefereeSVG.esc(s);

  // The running score a seat's public view shows, where the rules keep it in the open (the
  // field of the view's `players` entry). Goa scores only at the end.
  const RUNNING_SCORE = {batavia: ["gold", "gold"], santa_maria: ["points", "pts"]};

  function seconds(ms) {
    const s = Math.max(0, ms) / 1000;
    if (s >= 60) return `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
    return s >= 10 ? `${Math.floor(s)} s` : `${s.toFixed(1)} s`;
  }

  function label(key) {
    return String(key).replace(/_/g, " ");
  }

  const Viewer = {
    start(opts) {
      this.opts = opts;
      this.views = [];     // full view per frame
      this.frames = [];    // {v, seat, events, note}
      this.meta = null;
      this.index = 0;
      this.follow = true;  // stay on the newest frame while live
      this.timer = null;
      this.liveUpdates = 0;  // updates received while live (the browser tests read it)
      this.viewerSeat = null;  // null: the spectator's view; a seat; "reveal"
      this.reveal = null;  // every seat's final view, in the reveal
      this.liveNotes = {};  // version -> {seat, note}: the token holder's own notes, live
      this.notesSince = 0;
      this.token = null;   // a seat token, kept in this page only (never in an address)
      this.clock = null;
      this.clockOffset = 0;  // server clock - this browser's clock, in ms
      this.bind();
      this.takeTokenFromFragment();
      if (opts.static) {
        this.load(JSON.parse($("bundle").textContent));
      } else {
        const seat = opts.seat === null || opts.seat === undefined ? null : opts.seat;
        this.fetchBundle(seat).then(() => {
          if (this.meta.state === "running") this.goLive();
        });
      }
    },
    fetchBundle(seat) {
      const q = seat === null || seat === undefined ? "" : `?seat=${encodeURIComponent(seat)}`;
      return fetch(`/api/matches/${this.opts.id}${q}`).then((r) => {
        if (!r.ok) return r.json().then((e) => { throw new Error(e.error || r.statusText); });
        return r.json();
      }).then((b) => this.load(b), (err) => {
        $("notes-status").textContent = "";
        const box = $("embargo");
        box.hidden = false;
        box.textContent = String(err.message || err);
        if (!this.meta) return this.fetchBundle(null);
        return null;
      });
    },
    load(bundle) {
      const keep = this.meta && this.frames.length ? this.index : null;
      const opening = !this.meta;  // the page's first bundle (not a live match's end, a view)
      this.meta = bundle.match;
      this.viewerSeat = this.meta.viewer_seat === undefined ? null : this.meta.viewer_seat;
      this.reveal = bundle.reveal || null;
      this.frames = [];
      this.views = [];
      let view = null;
      for (const f of bundle.frames) {
        view = patch(view, f.d);
        this.frames.push({v: f.v, seat: f.seat, events: f.events, note: f.note});
        this.views.push(view);
      }
      this.setClock(this.meta.clock, this.meta.now_ms);
      const want = this.opts.version;
      let idx = this.frames.length - 1;
      if (want !== null && want !== undefined) {
        const i = this.frames.findIndex((f) => f.v === want);
        if (i >= 0) { idx = i; this.follow = false; }
      } else if (keep !== null && keep < this.frames.length && !this.follow) {
        idx = keep;  // another view of the same replay: stay on the same move
      } else if (opening && this.meta.state !== "running" && $("hide-result").checked) {
        // a finished match opened with "hide the result until the end" ticked: from its
        // set-up, the result out of sight until the replay reaches the end
        idx = 0;
        this.follow = false;
      }
      this.opts.version = null;
      const select = $("view-as");
      if (select) select.value = this.viewerSeat === null ? "" : String(this.viewerSeat);
      this.setupOptions();
      this.fillLog();
      this.show(Math.max(0, idx));
    },
    // ------------------------------------------------------------ names
    names() { return (this.meta && this.meta.names) || []; },
    // a seat's name, with its number when another seat has the same name
    who(s) {
      const names = this.names();
      const n = names[s];
      if (n === undefined || n === "") return `seat ${s}`;
      return names.filter((m) => m === n).length > 1 ? `${n} (seat ${s})` : n;
    },
    // an engine's event text with "seat N" put as the seat's name
    named(text) {
      return String(text || "").replace(/\b[Ss]eat (\d+)\b/g, (m, d) => {
        const s = Number(d);
        return s < this.names().length ? this.who(s) : m;
      });
    },
    // ------------------------------------------------------------ live
    goLive() {
      $("live-badge").hidden = false;
      const es = new EventSource(`/api/matches/${this.opts.id}/live`);
      this.source = es;
      es.onmessage = (ev) => {
        const msg = JSON.parse(ev.data);
        if (msg.type === "update") {
          this.liveUpdates += 1;
          if (msg.clock) this.setClock(msg.clock, msg.now_ms);
          if (msg.view) {
            const last = this.frames[this.frames.length - 1];
            if (!last || msg.version > last.v) {
              const movers = (msg.events || []).filter((e) => e.seat >= 0);
              const seat = movers.length ? movers[movers.length - 1].seat : -1;
              this.frames.push({v: msg.version, seat, events: msg.events || [], live: true});
              this.views.push(msg.view);
            }
          }
          for (const e of msg.events || []) this.addLog(e.v, e);
          if (this.token) this.fetchNotes();
          if (this.follow) this.show(this.frames.length - 1); else this.updateSlider();
        } else if (msg.type === "game_over" || msg.type === "resync") {
          es.close();
          $("live-badge").hidden = true;
          this.setClock(null);
          this.follow = true;
          this.fetchBundle(null).then(() => { if (msg.type === "resync" && this.meta.state === "running") this.goLive(); });
        }
      };
    },
    // The token holder's own notes (GET .../notes with Authorization: Bearer): while live
    // nobody else sees them; once the record is public they are in the replay for everyone.
    takeTokenFromFragment() {
      const m = /(?:^#|&)token=([^&]+)/.exec(location.hash || "");
      if (!m) return;
      this.token = decodeURIComponent(m[1]);
      // out of the address bar and the history (a fragment never reaches the server)
      history.replaceState(null, "", location.pathname + location.search);
    },
    fetchNotes() {
      if (!this.token || this.opts.static) return;
      if (this.notesBusy) { this.notesAgain = true; return; }  // once more when it answers
      this.notesBusy = true;
      this.notesAgain = false;
      fetch(`/api/matches/${this.opts.id}/notes?since=${this.notesSince}`,
            {headers: {Authorization: `Bearer ${this.token}`}, cache: "no-store"})
        .then((r) => r.json().then((body) => ({ok: r.ok, body})))
        .then(({ok, body}) => {
          this.notesBusy = false;
          const status = $("notes-status");
          if (!ok) { status.textContent = body.error || "refused"; this.token = null; return; }
          status.textContent = `showing the notes of ${this.who(body.seat)}`;
          for (const n of body.notes) {
            this.notesSince = Math.max(this.notesSince, n.n);
            if (this.liveNotes[n.v]) continue;
            this.liveNotes[n.v] = {seat: body.seat, note: n.note};
            this.addNote(n.v, body.seat, n.note);
          }
          const f = this.frames[this.index];
          if (f) this.showMoveEvents(f);
          if (this.notesAgain) this.fetchNotes();
        }, () => { this.notesBusy = false; });
    },
    // ------------------------------------------------------------ controls
    bind() {
      $("first").onclick = () => this.step(-Infinity);
      $("prev").onclick = () => this.step(-1);
      $("next").onclick = () => this.step(1);
      $("last").onclick = () => this.step(Infinity);
      $("play").onclick = () => this.togglePlay();
      $("slider").oninput = (e) => { this.stop(); this.show(Number(e.target.value)); };
      $("speed").onchange = () => { if (this.timer) { this.stop(); this.togglePlay(); } };
      $("hide-result").onchange = () => this.show(this.index);
      $("view-as").onchange = (e) => {
        const v = e.target.value;
        const seat = v === "" ? null : v;
        const url = new URL(location.href);
        if (seat === null) url.searchParams.delete("seat"); else url.searchParams.set("seat", v);
        url.searchParams.delete("v");
        history.replaceState(null, "", url.pathname + url.search);
        this.follow = this.index === this.frames.length - 1;
        this.fetchBundle(seat);
      };
      $("notes-go").onclick = () => {
        const t = $("seat-token").value.trim();
        $("seat-token").value = "";
        if (!t) return;
        this.token = t;
        this.notesSince = 0;
        this.fetchNotes();
      };
      $("seat-token").onkeydown = (e) => { if (e.key === "Enter") { e.preventDefault(); $("notes-go").click(); } };
      document.addEventListener("keydown", (e) => {
        if ((e.target.tagName === "INPUT" && e.target.type !== "range") || e.target.tagName === "SELECT") return;
        const k = {ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity}[e.key];
        if (k !== undefined) { e.preventDefault(); this.stop(); this.step(k); }
        else if (e.key === " ") { e.preventDefault(); this.togglePlay(); }
      });
      setInterval(() => this.tickClock(), 200);
    },
    setupOptions() {
      const live = this.meta.state === "running";
      const open = this.meta.state === "finished" && !this.meta.embargo && !this.opts.static;
      $("view-as-box").hidden = !open;
      $("hide-result-box").hidden = live;
      $("notes-box").hidden = !(live && !this.opts.static);
      if (live && this.token) this.fetchNotes();
    },
    step(d) {
      const n = this.frames.length - 1;
      const i = d === -Infinity ? 0 : d === Infinity ? n : Math.min(n, Math.max(0, this.index + d));
      if (d !== 1 || !this.timer) this.stop();
      this.show(i);
    },
    togglePlay() {
      if (this.timer) { this.stop(); return; }
      if (this.index >= this.frames.length - 1) this.show(0);
      $("play").textContent = "▮▮";
      this.timer = setInterval(() => {
        if (this.index >= this.frames.length - 1) { this.stop(); return; }
        this.show(this.index + 1);
      }, Number($("speed").value) || 350);
    },
    stop() {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      $("play").textContent = "▶";
    },
    updateSlider() {
      const s = $("slider");
      s.max = String(Math.max(0, this.frames.length - 1));
      s.value = String(this.index);
    },
    // ------------------------------------------------------------ drawing
    draw(view, ctx) {
      const draw = window.RefereeBoards[this.opts.game];
      try {
        return draw ? draw(view, this.meta, ctx) : `<pre>${esc(JSON.stringify(view, null, 1))}</pre>`;
      } catch (err) {
        return `<pre class="render-error">cannot draw this view: ${esc(err)}</pre>`;
      }
    },
    show(i) {
      if (!this.frames.length) return;
      this.index = i;
      this.follow = i === this.frames.length - 1;
      const f = this.frames[i];
      const view = this.views[i];
      const atEnd = i === this.frames.length - 1;
      this.updateSlider();
      $("version-label").textContent = `version ${f.v} / ${this.frames[this.frames.length - 1].v}`;
      const board = $("board");
      const shown = this.viewerSeat === "reveal" ? null : this.viewerSeat;
      board.innerHTML = this.draw(view, {v: f.v, seat: f.seat, events: f.events || [],
                                         prev: i > 0 ? this.views[i - 1] : null, viewer_seat: shown});
      board.dataset.version = String(f.v);
      board.dataset.viewer = shown === null ? "spectator" : String(shown);
      this.showReveal(atEnd, f);
      this.showMoveEvents(f);
      const hide = this.spoilersHidden() && !atEnd;
      for (const li of document.querySelectorAll("#log li")) {
        const v = Number(li.dataset.v);
        li.classList.toggle("current", v === f.v);
        li.hidden = hide && v > f.v;
      }
      const cur = document.querySelector("#log li.current");
      // scroll the log box only: scrollIntoView would scroll the page too, hiding its title
      const log = $("log");
      if (cur && log) {
        const lr = log.getBoundingClientRect(), cr = cur.getBoundingClientRect();
        if (cr.top < lr.top || cr.bottom > lr.bottom) log.scrollTop += cr.top - lr.top - log.clientHeight / 2;
      }
      const turn = view && view.current_seat !== undefined ? view.current_seat : -1;
      for (const el of document.querySelectorAll(".seats .seat")) el.classList.toggle("to-act", Number(el.dataset.seat) === turn);
      this.showScores(view);
      this.showResult(atEnd);
    },
    showReveal(atEnd, f) {
      const box = $("reveal");
      if (this.viewerSeat !== "reveal" || !this.reveal || !atEnd) { box.hidden = true; box.innerHTML = ""; return; }
      box.innerHTML = "<h3>Reveal: every seat's final view</h3>" + this.reveal.map((r) =>
        `<section class="reveal-seat" data-seat="${r.seat}"><h4><span class="seat s${r.seat}">${esc(this.who(r.seat))}</span>'s view</h4>` +
        `<div class="board">${this.draw(r.view, {v: f.v, seat: f.seat, events: f.events || [], prev: null, viewer_seat: "reveal"})}</div></section>`).join("");
      box.hidden = false;
    },
    spoilersHidden() {
      return this.meta.state !== "running" && $("hide-result").checked;
    },
    noteOf(f) {
      if (f.note) return {seat: f.seat, note: f.note};
      return this.liveNotes[f.v] || null;
    },
    showMoveEvents(f) {
      const ev = $("move-events");
      ev.innerHTML = "";
      for (const e of f.events || []) ev.appendChild(this.eventItem(e));
      if (!f.events || !f.events.length) ev.innerHTML = `<li class="muted">${f.v === 0 ? "set-up" : "no public event"}</li>`;
      const n = this.noteOf(f);
      if (n) ev.appendChild(this.noteItem(n.seat, n.note));
    },
    showScores(view) {
      const field = RUNNING_SCORE[this.opts.game];
      const players = view && Array.isArray(view.players) ? view.players : [];
      for (const el of document.querySelectorAll(".seats .seat")) {
        const s = Number(el.dataset.seat);
        const box = el.querySelector(".seat-score");
        if (!box) continue;
        const p = players.find((q) => q && Number(q.seat) === s) || players[s];
        const value = field && p ? p[field[0]] : undefined;
        box.hidden = value === undefined;
        if (value !== undefined) box.textContent = `${value} ${field[1]}`;
      }
    },
    // ------------------------------------------------------------ clocks
    setClock(clock, serverNow) {
      this.clock = clock && clock.move_ms ? clock : null;
      if (serverNow) this.clockOffset = serverNow - Date.now();
      this.tickClock();
    },
    tickClock() {
      const c = this.clock;
      for (const el of document.querySelectorAll(".seats .seat")) {
        const box = el.querySelector(".seat-clock");
        if (!box) continue;
        if (!c || this.meta.state !== "running") { box.hidden = true; box.classList.remove("running"); continue; }
        const s = Number(el.dataset.seat);
        const bank = (c.bank_left_ms || [])[s] || 0;
        let text = c.bank_ms ? `bank ${seconds(bank)}` : "";
        const running = s === c.seat && c.deadline_ms > 0;
        if (running) {
          const left = c.deadline_ms - (Date.now() + this.clockOffset);
          text = `${seconds(left)} left` + (c.bank_ms ? ` (bank ${seconds(Math.min(bank, Math.max(0, left)))})` : "");
        }
        const strikes = (c.strikes_used || [])[s] || 0;
        if (strikes) text += ` · ${strikes} timeout${strikes > 1 ? "s" : ""}`;
        box.textContent = text;
        box.hidden = !text;
        box.classList.toggle("running", running);
      }
    },
    // ------------------------------------------------------------ log
    eventItem(e) {
      const li = document.createElement("li");
      li.className = `seat-ev s${e.seat}`;
      li.textContent = this.named(e.text || e.kind);
      return li;
    },
    noteItem(seat, note) {
      const li = document.createElement("li");
      li.className = `note s${seat}`;
      const who = document.createElement("span");
      who.className = `seat s${seat}`;
      who.textContent = `${this.who(seat)}'s note`;
      const text = document.createElement("span");
      text.className = "note-text";
      text.textContent = note;
      li.append(who, text);
      return li;
    },
    fillLog() {
      const log = $("log");
      log.innerHTML = "";
      this.frames.forEach((f) => {
        (f.events || []).forEach((e) => this.addLog(f.v, e));
        const n = this.noteOf(f);
        if (n) this.addNote(f.v, n.seat, n.note);
      });
    },
    addLog(v, e) { this.logItem(v, this.eventItem(e)); },
    addNote(v, seat, note) { this.logItem(v, this.noteItem(seat, note)); },
    logItem(v, li) {
      li.dataset.v = String(v);
      li.title = `version ${v}`;
      li.onclick = () => { const i = this.frames.findIndex((f) => f.v === v); if (i >= 0) { this.stop(); this.show(i); } };
      // after the entries of its version (a live note may arrive after later moves' events)
      const log = $("log");
      let after = log.lastElementChild;
      while (after && Number(after.dataset.v) > v) after = after.previousElementSibling;
      log.insertBefore(li, after ? after.nextSibling : log.firstChild);
    },
    // ------------------------------------------------------------ the result
    showResult(atEnd) {
      const st = $("state");
      st.textContent = this.meta.state;
      st.className = `state ${this.meta.state}`;
      const note = $("embargo");  // a finished match whose replay is held back, and why
      if (note && this.meta.embargo) {
        note.hidden = false;
        note.textContent = this.meta.embargo.message;
      }
      const r = this.meta.result;
      const box = $("result");
      const scoring = $("scoring");
      if (!r || (this.spoilersHidden() && !atEnd)) { box.hidden = true; scoring.hidden = true; return; }
      const names = this.names();
      const order = names.map((_, s) => s).sort((a, b) => (r.ranks[a] || 0) - (r.ranks[b] || 0));
      box.innerHTML = "<h3>Final scores</h3><table id='scores'>" + order.map((s) =>
        `<tr class="s${s}"><td>${r.ranks[s]}.</td><td><span class="seat s${s}">${esc(this.who(s))}</span></td><td class="num">${r.scores[s]}</td></tr>`).join("") +
        `</table><p class="summary">${esc(this.named(r.summary || ""))}</p>`;
      box.hidden = false;
      scoring.innerHTML = this.breakdown(r, order);
      scoring.hidden = !scoring.innerHTML;
    },
    // The scoring per rulebook category (each seat's SeatResult.details_json as the game's
    // result gives it), one row per category; a category with parts (Batavia's goods, Goa's
    // progress per column) gets one indented row per part below it.
    breakdown(r, order) {
      const details = r.details || [];
      if (!details.length || !details.some((d) => d && typeof d === "object")) return "";
      const rows = [];  // [path, depth]
      const seen = new Set();
      const walk = (obj, path) => {
        for (const k of Object.keys(obj || {})) {
          const p = [...path, k];
          const id = p.join("/");
          if (!seen.has(id)) { seen.add(id); rows.push(p); }
          if (obj[k] && typeof obj[k] === "object" && !Array.isArray(obj[k])) walk(obj[k], p);
        }
      };
      for (const d of details) walk(d, []);
      const top = (p) => p[0] === "total" ? 1 : 0;
      rows.sort((a, b) => top(a) - top(b));  // the total last (stable otherwise)
      const value = (d, p) => p.reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), d);
      const cell = (v) => {
        if (v === undefined || v === null) return "";
        if (typeof v === "object") return Array.isArray(v) ? esc(v.join(", ")) : "";
        return esc(v);
      };
      return "<h3>Scoring</h3><table id='breakdown'><thead><tr><th>category</th>" +
        order.map((s) => `<th class="num"><span class="seat s${s}">${esc(this.who(s))}</span></th>`).join("") + "</tr></thead><tbody>" +
        rows.map((p) => `<tr class="${p[0] === "total" ? "total" : ""} depth${p.length - 1}" data-key="${esc(p.join("/"))}"><td>${esc(label(p[p.length - 1]))}</td>` +
          order.map((s) => `<td class="num">${cell(value(details[s] || {}, p))}</td>`).join("") + "</tr>").join("") +
        "</tbody></table>";
    },
  };
  window.RefereeViewer = Viewer;
  window.RefereePatch = patch;
})();
