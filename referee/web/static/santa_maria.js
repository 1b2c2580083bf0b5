// Santa Maria board: each player's 6x6 colony (printed cells and development tiles, buildings
// with their effects, dice and coins on them, colonists on roads, purple end points), the
// religion and conquistador tracks, the docks with their ships, the monk spaces, the retreat
// spaces, the white dice and the tile display. Public view only (ships in a port are face down).
(function () {
  "use strict";
  const S = window.RefereeSVG;
  const TERRAIN = {ROAD: "#c9bfae", FARM: "#e8cf5a", FOREST: "#5d9448", MOUNTAIN: "#9b8b78", CITY: "#88b3d9", TOWN_HALL: "#b58ad3"};
  const RES = [["wood", "#8a5a2b", "wd"], ["wheat", "#e0b43c", "wh"], ["sugar", "#f3f0ea", "su"], ["gem", "#4aa3a0", "ge"], ["gold", "#f2c230", "au"]];
  const goods = (g) => {
    if (!g) return "";
    const parts = [];
    for (const [k, , a] of RES) if (g[k]) parts.push(`${g[k]}${a}`);
    if (g.coins) parts.push(`${g.coins}$`);
    if (g.points) parts.push(`${g.points}★`);
    return parts.join("+");
  };
  const effect = (e) => ({
    PRODUCE: () => "+" + goods(e.gain),
    EXCHANGE: () => (e.options || []).map((o) => `${goods(o.pay)}→${goods(o.gain)}`).join("|"),
    SHIP: () => "ship",
    CONQUISTADOR: () => "⚔",
    RELIGION: () => "✝",
  }[e.kind] || (() => "?"))();

  function cell(c, x, y, s) {
    const ct = c.content || {};
    const out = [S.rect(x + 1, y + 1, s - 2, s - 2, {rx: 3, fill: TERRAIN[ct.terrain] || "#f4ecd8",
      stroke: ct.end_points ? "#7b2d8e" : c.printed ? "#8a7a60" : "#3b2a1a", stroke_width: ct.end_points ? 3 : c.printed ? 1 : 1.8})];
    const fx = (ct.effects || []).map(effect);
    if (ct.terrain === "ROAD") {
      for (let k = 0; k < (ct.colonists || 0); k++) out.push(S.circle(x + s / 2 + (k - ((ct.colonists || 1) - 1) / 2) * 11, y + s / 2, 4.5, {fill: "#fff", stroke: "#333"}));
    } else {
      const txt = fx.join(" ");
      const lines = txt.length > 9 ? [fx.slice(0, Math.ceil(fx.length / 2)).join(" "), fx.slice(Math.ceil(fx.length / 2)).join(" ")] : [txt];
      lines.forEach((ln, i) => out.push(S.text(x + s / 2, y + 15 + i * 11, ln, {text_anchor: "middle", font_size: ln.length > 11 ? 7.5 : 9.5, fill: "#1c140c"})));
      if (ct.terrain === "TOWN_HALL") out.push(S.text(x + s / 2, y + s - 5, "town hall", {text_anchor: "middle", font_size: 7, fill: "#3b1a4a"}));
    }
    if (ct.end_points) out.push(S.text(x + s - 4, y + s - 4, String(ct.end_points), {text_anchor: "end", font_size: 10, font_weight: "bold", fill: "#7b2d8e"}));
    if (c.die && c.die !== "DIE_COLOR_UNSPECIFIED") {
      out.push(S.rect(x + 4, y + s - 17, 13, 13, {rx: 2, fill: c.die === "BLUE" ? "#2f6fd1" : "#fff", stroke: "#222"}));
    }
    if (c.coins) out.push(S.circle(x + s - 10, y + 10, 7, {fill: "#f2c230", stroke: "#8a6a10"}) + S.text(x + s - 10, y + 13.5, String(c.coins), {text_anchor: "middle", font_size: 9}));
    out.push(S.title(`(${c.row},${c.col}) ${S.cap(ct.terrain)}${fx.length ? ": " + fx.join(", ") : ""}${ct.colonists ? `, ${ct.colonists} colonist(s)` : ""}${ct.end_points ? `, ${ct.end_points} end points` : ""}${c.die && c.die !== "DIE_COLOR_UNSPECIFIED" ? ", " + S.cap(c.die) + " die" : ""}${c.coins ? `, ${c.coins} coins` : ""}`));
    return S.g(out.join(""), {class: "cell"});
  }

  function colony(v, p, meta, x, y, w) {
    const seat = p.seat || 0;
    const s = Math.floor((w - 24) / 6);
    const out = [S.rect(x, y, w, 24 + 6 * s + 128, {rx: 8, fill: "#fffaf0", stroke: S.seatColor(seat), stroke_width: seat === v.current_seat ? 4 : 2})];
    out.push(S.rect(x, y, w, 24, {rx: 8, fill: S.seatColor(seat)}));
    out.push(S.text(x + 8, y + 17, `${S.name(meta, seat)}${v.first_player === seat ? " ⚑" : ""} · board ${p.colony_board}`, {font_size: 13, fill: "#fff", font_weight: "bold"}));
    out.push(S.text(x + w - 8, y + 17, `${p.points} ★`, {font_size: 14, fill: "#fff", font_weight: "bold", text_anchor: "end", class: "points"}));
    const gx = x + 18, gy = y + 30;
    for (let i = 0; i < 6; i++) {
      out.push(S.text(gx - 9, gy + i * s + s / 2 + 4, String(i + 1), {font_size: 9, fill: "#2f6fd1", text_anchor: "middle"}));
      out.push(S.text(gx + i * s + s / 2, y + 30 + 6 * s + 10, String(i + 1), {font_size: 9, fill: "#666", text_anchor: "middle"}));
    }
    out.push(S.rect(gx, gy, 6 * s, 6 * s, {fill: "#efe6cf", stroke: "#b39b6b"}));
    for (const c of p.colony || []) out.push(cell(c, gx + (c.col - 1) * s, gy + (c.row - 1) * s, s));
    let ly = gy + 6 * s + 26;
    // resources and coins
    out.push(S.circle(x + 16, ly - 4, 8, {fill: "#f2c230", stroke: "#8a6a10"}) + S.text(x + 28, ly, `${p.coins}`, {font_size: 12, class: "coins"}));
    RES.forEach(([k, col, a], i) => {
      const n = (p.resources || {})[k] || 0;
      out.push(S.rect(x + 52 + i * 44, ly - 12, 14, 14, {rx: 2, fill: col, stroke: "#555"}) + S.text(x + 70 + i * 44, ly, `${n}`, {font_size: 12}) + S.title(`${k}: ${n}`));
    });
    ly += 20;
    const blue = (p.blue_dice || []).map((d) => `[${d}]`).join(" ");
    out.push(S.text(x + 8, ly, `blue dice ${blue || "-"} (${p.blue_unlocked} unlocked) · white used ${p.white_used}/${p.white_limit}`, {font_size: 11}));
    ly += 16;
    out.push(S.text(x + 8, ly, `monks left ${p.monks_left} · next activation ${p.activation_cost}$ · ${p.retreat_space >= 0 ? "retreated (space " + (p.retreat_space + 1) + ")" : "in the market"}`, {font_size: 11}));
    ly += 16;
    const port = ((p.port && p.port.ships_per_dock) || []).map((n, i) => `dock ${i + 1}: ${n}`).join(" · ");
    out.push(S.text(x + 8, ly, `port ships ${port}`, {font_size: 11}));
    ly += 16;
    if ((p.scholars || []).length) out.push(S.text(x + 8, ly, `scholars: ${p.scholars.map(S.cap).join(", ")}`, {font_size: 10.5}));
    return out.join("");
  }

  function track(label, t, value, x, y, w, meta, players, marks) {
    const n = (t.length || 0) + 1, cw = w / n;
    const out = [S.text(x, y - 6, label, {font_size: 13, font_weight: "bold", fill: "#4a3520"})];
    for (let i = 0; i < n; i++) {
      const mark = marks(i);
      out.push(S.rect(x + i * cw, y, cw - 2, 26, {rx: 2, fill: mark ? "#e2cf94" : "#efe3c4", stroke: "#cdbd9c"}));
      out.push(S.text(x + i * cw + 3, y + 10, String(i), {font_size: 8, fill: "#7a6a55"}));
      if (mark) out.push(S.text(x + i * cw + cw - 4, y + 10, mark, {font_size: 9, text_anchor: "end", fill: "#6a4a10"}));
    }
    players.forEach((p, k) => {
      const pos = Math.min(n - 1, value(p));
      out.push(S.circle(x + pos * cw + 7 + (k % 4) * 8, y + 19, 4.5, {fill: S.seatColor(p.seat || 0), stroke: "#111"}) + S.title(`${S.name(meta, p.seat || 0)}: ${value(p)}`));
    });
    return out.join("");
  }

  window.RefereeBoards.santa_maria = function (v, meta) {
    const W = 1200;
    const ps = v.players || [];
    const out = [];
    const rel = v.religion_track || {}, con = v.conquistador_track || {};
    out.push(track("Religion track", rel, (p) => p.religion || 0, 16, 26, 560, meta, ps,
      (i) => ((rel.monk_symbols || []).includes(i) ? "monk" : "")));
    out.push(track("Conquistador track", con, (p) => p.conquistador || 0, 600, 26, 580, meta, ps,
      (i) => [((con.gold_symbols || []).includes(i) ? "gold" : ""), ((con.trees || []).includes(i) && ps.length === 1 ? "tree" : "")].filter(Boolean).join(" ")));
    // docks and ships
    let y = 84;
    out.push(S.text(16, y, "Docks (face-up ship, bonus)", {font_size: 13, font_weight: "bold", fill: "#4a3520"}));
    (v.docks || []).forEach((d, i) => {
      const slot = (v.ship_slots || []).find((s) => (s.dock || 0) === (d.dock || 0)) || {};
      const x = 16 + i * 140;
      out.push(S.rect(x, y + 8, 132, 44, {rx: 5, fill: "#d6e6f2", stroke: "#5a7fa0"}));
      out.push(S.text(x + 6, y + 24, `${i + 1}: ${d.bonus}${goods(d.gain) ? " " + goods(d.gain) : ""}`, {font_size: 11}));
      out.push(S.text(x + 6, y + 42, slot.present ? `ship cost ${goods(slot.ship.cost) || "-"} · ${slot.ship.points}★` : "no ship", {font_size: 11}));
    });
    out.push(S.text(590, y + 24, `ship pile ${v.ships_left} · road tiles ${v.road_tiles_left}`, {font_size: 11}));
    out.push(S.text(590, y + 42, `white dice: ${(v.white_dice || []).map((d) => `[${d}]`).join(" ") || "-"}${(v.shared_blue_dice || []).length ? " · blue pool " + v.shared_blue_dice.map((d) => `[${d}]`).join(" ") : ""}`, {font_size: 12}));
    // retreat spaces
    y = 158;
    out.push(S.text(16, y, "Retreat spaces", {font_size: 13, font_weight: "bold", fill: "#4a3520"}));
    (v.retreat_spaces || []).forEach((r, i) => {
      const x = 16 + i * 112;
      out.push(S.rect(x, y + 8, 104, 30, {rx: 5, fill: r.occupant >= 0 ? S.seatColor(r.occupant) : "#efe3c4", stroke: "#b39b6b"}));
      out.push(S.text(x + 6, y + 28, `${i + 1}. ${r.action}${goods(r.gain) ? " " + goods(r.gain) : ""}`, {font_size: 11, fill: r.occupant >= 0 ? "#fff" : "#222"}));
    });
    // monk spaces
    out.push(S.text(600, y, "Monk spaces", {font_size: 13, font_weight: "bold", fill: "#4a3520"}));
    (v.monk_spaces || []).forEach((m, i) => {
      const x = 600 + (i % 6) * 98, yy = y + 8 + Math.floor(i / 6) * 34;
      const label = m.kind === "camp" ? `camp ${goods(m.reward)}` : `${m.kind === "bishop" ? "✝" : "📜"} ${S.cap(m.tile)}${m.points ? " " + m.points + "★" : ""}`;
      out.push(S.rect(x, yy, 94, 30, {rx: 4, fill: m.kind === "camp" ? "#e9dfc3" : m.kind === "bishop" ? "#e6d3ea" : "#d8e6cc", stroke: "#b39b6b"}));
      out.push(S.text(x + 4, yy + 12, label.replace("📜 ", ""), {font_size: 8.5}));
      (m.monks || []).forEach((s, k) => out.push(S.circle(x + 10 + k * 12, yy + 22, 4.5, {fill: S.seatColor(s), stroke: "#111"})));
    });
    // display
    y = 248;
    out.push(S.text(16, y, `Development tiles (year ${v.year} of 3) · piles: ${v.doubles_left} doubles, ${v.triples_left} triples`, {font_size: 13, font_weight: "bold", fill: "#4a3520"}));
    (v.display || []).forEach((t, i) => {
      const x = 16 + i * 58, yy = y + 10, s = 26;
      if (!t.present) { out.push(S.rect(x, yy, 52, 54, {rx: 3, fill: "none", stroke: "#cdbd9c", stroke_dasharray: "3 2"})); return; }
      for (const c of t.cells || []) out.push(S.rect(x + (c.dc || 0) * s, yy + (c.dr || 0) * s, s - 1, s - 1, {fill: TERRAIN[(c.content || {}).terrain] || "#eee", stroke: "#3b2a1a"}));
    });
    // colonies
    const per = Math.min(4, Math.max(ps.length, 2));
    const cw = (W - 32 - (per - 1) * 10) / per;
    const top = 330;
    let bottom = top;
    ps.forEach((p, i) => {
      const x = 16 + (i % per) * (cw + 10), yy = top + Math.floor(i / per) * (cw + 160);
      out.push(colony(v, p, meta, x, yy, cw));
      bottom = Math.max(bottom, yy + 24 + 6 * Math.floor((cw - 24) / 6) + 132);
    });
    let fy = bottom + 18;
    out.push(S.text(16, fy, `${S.cap(v.phase)} · year ${v.year}${v.current_seat >= 0 ? " · to act: " + S.name(meta, v.current_seat) : ""}${v.pending && v.pending.kind ? " (" + v.pending.kind.replace("santa_maria.", "").replace(/_/g, " ") + ")" : ""}`, {font_size: 13, id: "status"}));
    fy += 6;
    return S.svg(W, fy, out.join(""), "Santa Maria board");
  };
})();
