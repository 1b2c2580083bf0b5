// The match viewer: a live board fed by server-sent events, then a replay with a move scrubber.
// The same code runs the live page, the replay page and the static replay page of a tournament
// report (there the frames are embedded in the page: no server needed).
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

  const Viewer = {
    start(opts) {
      this.opts = opts;
      this.views = [];     // full public view per frame
      this.frames = [];    // {v, seat, events}
      this.meta = null;
      this.index = 0;
      this.follow = true;  // stay on the newest frame while live
      this.timer = null;
      this.liveUpdates = 0;  // updates received while live (the browser tests read it)
      this.bind();
      if (opts.static) {
        this.load(JSON.parse($("bundle").textContent));
      } else {
        this.fetchBundle().then(() => { if (this.meta.state === "running") this.goLive(); });
      }
    },
    fetchBundle() {
      return fetch(`/api/matches/${this.opts.id}`).then((r) => r.json()).then((b) => this.load(b));
    },
    load(bundle) {
      this.meta = bundle.match;
      this.frames = [];
      this.views = [];
      let view = null;
      for (const f of bundle.frames) {
        view = patch(view, f.d);
        this.frames.push({v: f.v, seat: f.seat, events: f.events});
        this.views.push(view);
      }
      const want = this.opts.version;
      let idx = this.frames.length - 1;
      if (want !== null && want !== undefined) {
        const i = this.frames.findIndex((f) => f.v === want);
        if (i >= 0) { idx = i; this.follow = false; }
      }
      this.opts.version = null;
      this.fillLog();
      this.showResult();
      this.show(Math.max(0, idx));
    },
    goLive() {
      $("live-badge").hidden = false;
      const es = new EventSource(`/api/matches/${this.opts.id}/live`);
      this.source = es;
      es.onmessage = (ev) => {
        const msg = JSON.parse(ev.data);
        if (msg.type === "update") {
          this.liveUpdates += 1;
          if (msg.view) {
            const last = this.frames[this.frames.length - 1];
            if (!last || msg.version > last.v) {
              this.frames.push({v: msg.version, seat: -1, events: msg.events || [], live: true});
              this.views.push(msg.view);
            }
          }
          for (const e of msg.events || []) this.addLog(e.v, e);
          if (this.follow) this.show(this.frames.length - 1); else this.updateSlider();
        } else if (msg.type === "game_over" || msg.type === "resync") {
          es.close();
          $("live-badge").hidden = true;
          this.fetchBundle().then(() => { if (msg.type === "resync" && this.meta.state === "running") this.goLive(); });
        }
      };
    },
    bind() {
      $("first").onclick = () => this.step(-Infinity);
      $("prev").onclick = () => this.step(-1);
      $("next").onclick = () => this.step(1);
      $("last").onclick = () => this.step(Infinity);
      $("play").onclick = () => this.togglePlay();
      $("slider").oninput = (e) => { this.stop(); this.show(Number(e.target.value)); };
      document.addEventListener("keydown", (e) => {
        if (e.target.tagName === "INPUT" && e.target.type !== "range") return;
        const k = {ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity}[e.key];
        if (k !== undefined) { e.preventDefault(); this.stop(); this.step(k); }
        else if (e.key === " ") { e.preventDefault(); this.togglePlay(); }
      });
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
      $("play").textContent = "⏸";
      this.timer = setInterval(() => {
        if (this.index >= this.frames.length - 1) { this.stop(); return; }
        this.show(this.index + 1);
      }, 350);
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
    show(i) {
      if (!this.frames.length) return;
      this.index = i;
      this.follow = i === this.frames.length - 1;
      const f = this.frames[i];
      const view = this.views[i];
      this.updateSlider();
      $("version-label").textContent = `version ${f.v} / ${this.frames[this.frames.length - 1].v}`;
      const board = $("board");
      const draw = window.RefereeBoards[this.opts.game];
      try {
        board.innerHTML = draw ? draw(view, this.meta, {v: f.v, seat: f.seat, events: f.events || [], prev: i > 0 ? this.views[i - 1] : null, viewer_seat: this.opts.viewer_seat === undefined ? null : this.opts.viewer_seat}) : `<pre>${window.RefereeSVG.esc(JSON.stringify(view, null, 1))}</pre>`;
      } catch (err) {
        board.innerHTML = `<pre class="render-error">cannot draw this view: ${window.RefereeSVG.esc(err)}</pre>`;
      }
      board.dataset.version = String(f.v);
      const ev = $("move-events");
      ev.innerHTML = "";
      for (const e of f.events || []) ev.appendChild(this.eventItem(e));
      if (!f.events || !f.events.length) ev.innerHTML = `<li class="muted">${f.v === 0 ? "set-up" : "no public event"}</li>`;
      for (const li of document.querySelectorAll("#log li")) li.classList.toggle("current", Number(li.dataset.v) === f.v);
      const cur = document.querySelector("#log li.current");
      // scroll the log box only: scrollIntoView would scroll the page too, hiding its title
      const log = $("log");
      if (cur && log) {
        const lr = log.getBoundingClientRect(), cr = cur.getBoundingClientRect();
        if (cr.top < lr.top || cr.bottom > lr.bottom) log.scrollTop += cr.top - lr.top - log.clientHeight / 2;
      }
      const turn = view && view.current_seat !== undefined ? view.current_seat : -1;
      for (const el of document.querySelectorAll(".seats .seat")) el.classList.toggle("to-act", Number(el.dataset.seat) === turn);
    },
    eventItem(e) {
      const li = document.createElement("li");
      li.className = `seat-ev s${e.seat}`;
      li.textContent = e.text || e.kind;
      return li;
    },
    fillLog() {
      const log = $("log");
      log.innerHTML = "";
      this.frames.forEach((f) => (f.events || []).forEach((e) => this.addLog(f.v, e)));
    },
    addLog(v, e) {
      const li = this.eventItem(e);
      li.dataset.v = String(v);
      li.title = `version ${v}`;
      li.onclick = () => { const i = this.frames.findIndex((f) => f.v === v); if (i >= 0) { this.stop(); this.show(i); } };
      $("log").appendChild(li);
    },
    showResult() {
      const st = $("state");
      st.textContent = this.meta.state;
      st.className = `state ${this.meta.state}`;
      const note = $("embargo");  // a finished match whose replay is held back, and why
      if (note) {
        note.hidden = !this.meta.embargo;
        if (this.meta.embargo) note.textContent = this.meta.embargo.message;
      }
      const r = this.meta.result;
      const box = $("result");
      if (!r) { box.hidden = true; return; }
      const names = this.meta.names;
      const order = names.map((_, s) => s).sort((a, b) => (r.ranks[a] || 0) - (r.ranks[b] || 0));
      box.innerHTML = "<h3>Final scores</h3><table id='scores'>" + order.map((s) =>
        `<tr class="s${s}"><td>${r.ranks[s]}.</td><td><span class="seat s${s}">${window.RefereeSVG.esc(names[s])}</span></td><td class="num">${r.scores[s]}</td></tr>`).join("") +
        `</table><p class="summary">${window.RefereeSVG.esc(r.summary || "")}</p>`;
      box.hidden = false;
    },
  };
  window.RefereeViewer = Viewer;
  window.RefereePatch = patch;
})();
