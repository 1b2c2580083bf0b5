// Santa Maria board: the religion and conquistador tracks, the docks with their face-up ships,
// the retreat spaces, the monk spaces, the development tile display, a legend, and each player's
// 6x6 colony (printed cells and development tiles, buildings with their effects drawn as icons
// with numbers, dice and coins on them, colonists on roads, purple end-of-game points), with
// labelled resources. Every text is at least 12 units high (about 12 px at 1400x1000); each cell
// and space has a tooltip (<title>) with its full description. What the last move changed has an
// outline in the mover's colour (ctx from viewer.js). Ships in a port are face down: a seat's view
// (a replay from that seat) and the final view show their faces.
(function () {
  "use strict";
  const S = window.RefereeSVG;
  const W = 1000;
  const FONT = 12;  // the smallest text drawn anywhere on this board
  const TERRAIN = {ROAD: "#cfc6b4", FARM: "#ecd66e", FOREST: "#7fb069", MOUNTAIN: "#b3a593", CITY: "#9cc3e4", TOWN_HALL: "#c9a6e0"};
  const TERRAIN_NAME = {ROAD: "road", FARM: "farm", FOREST: "forest", MOUNTAIN: "mountain", CITY: "city", TOWN_HALL: "town hall"};
  // resources as the rulebook lists them (Bois, Blé, Sucre, Gemme, Or), then coins and points
  const RES = [["wood", "#8a5a2b"], ["wheat", "#e3b23c"], ["sugar", "#f7f5ef"], ["gem", "#3fa7a3"], ["gold", "#f2c230"]];
  const GOODS = ["wood", "wheat", "sugar", "gem", "gold", "coins", "points"];
  const PLURAL = {gem: "gems", coins: "coins", points: "points"};
  const SINGULAR = {coins: "coin", points: "point"};
  const goodsWords = (g) => {
    const parts = [];
    for (const k of GOODS) {
      const n = (g || {})[k] || 0;
      if (n) parts.push(`${n} ${n === 1 ? SINGULAR[k] || k : PLURAL[k] || k}`);
    }
    return parts.join(" + ") || "nothing";
  };
  const DOCK = {coins: "Coins", religion: "Religion", conquistador: "Conquistador", points: "Points"};
  const RETREAT = {coins: "gain", religion: "Religion action", conquistador: "Conquistador action", ship: "Ship action", road: "road tile"};
  const nice = (s) => S.cap(s);

  // ---- icons (drawn, no font needed); (x, y) is the icon's centre, r its half size
  const ICON = {
    wood: (x, y, r) => S.rect(x - r, y - r, 2 * r, 2 * r, {rx: 1.5, fill: "#8a5a2b", stroke: "#3b2410", stroke_width: 1}),
    wheat: (x, y, r) => S.rect(x - r, y - r, 2 * r, 2 * r, {rx: 1.5, fill: "#e3b23c", stroke: "#6b4e0a", stroke_width: 1}),
    sugar: (x, y, r) => S.rect(x - r, y - r, 2 * r, 2 * r, {rx: 1.5, fill: "#f7f5ef", stroke: "#555", stroke_width: 1}),
    gem: (x, y, r) => `<path d="M${x},${y - r - 1} L${x + r + 1},${y} L${x},${y + r + 1} L${x - r - 1},${y} Z" fill="#3fa7a3" stroke="#174d4b" stroke-width="1"/>`,
    gold: (x, y, r) => S.rect(x - r, y - r, 2 * r, 2 * r, {rx: 1.5, fill: "#f2c230", stroke: "#7a5200", stroke_width: 1.6}) +
      S.line(x - r + 2, y, x + r - 2, y, {stroke: "#7a5200", stroke_width: 1}),
    coins: (x, y, r) => S.circle(x, y, r, {fill: "#f0c64a", stroke: "#8a6a10", stroke_width: 1.2}) + S.circle(x, y, r * 0.45, {fill: "none", stroke: "#8a6a10", stroke_width: 0.8}),
    points: (x, y, r) => S.star(x, y, r + 1.5),
    cross: (x, y, r) => `<path d="M${x - 1.6},${y - r - 1} h3.2 v${r * 0.7} h${r * 0.7} v3.2 h${-r * 0.7} v${r * 1.3} h-3.2 v${-r * 1.3} h${-r * 0.7} v-3.2 h${r * 0.7} Z" fill="#7b2d8e" stroke="#3b0f45" stroke-width="0.6"/>`,
    conq: (x, y, r) => `<path d="M${x - r},${y + r * 0.3} Q${x},${y - r * 1.5} ${x + r},${y + r * 0.3} Z" fill="#8d8d8d" stroke="#333" stroke-width="1"/>` +
      S.line(x - r - 1.5, y + r * 0.45, x + r + 1.5, y + r * 0.45, {stroke: "#333", stroke_width: 2}) + S.line(x, y - r * 0.6, x, y - r * 1.3, {stroke: "#b3261e", stroke_width: 2}),
    ship: (x, y, r) => `<path d="M${x - r - 1},${y + 1} H${x + r + 1} L${x + r - 2},${y + r} H${x - r + 2} Z" fill="#6b4423" stroke="#2b1a0a" stroke-width="0.8"/>` +
      `<path d="M${x},${y - r - 1} V${y + 1} M${x},${y - r - 1} L${x + r},${y - 1} H${x} Z" fill="#fff" stroke="#333" stroke-width="0.8"/>`,
    colonist: (x, y, r) => S.circle(x, y - r * 0.45, r * 0.5, {fill: "#fff", stroke: "#333"}) + `<path d="M${x - r * 0.8},${y + r} Q${x},${y - r * 0.3} ${x + r * 0.8},${y + r} Z" fill="#fff" stroke="#333"/>`,
    monk: (x, y, r) => `<path d="M${x - r * 0.8},${y + r} L${x - r * 0.5},${y - r * 0.2} Q${x},${y - r * 1.3} ${x + r * 0.5},${y - r * 0.2} L${x + r * 0.8},${y + r} Z" fill="#6b4a2b" stroke="#2b1a0a" stroke-width="0.8"/>`,
    tree: (x, y, r) => `<path d="M${x},${y - r - 1} L${x + r},${y + r * 0.6} H${x - r} Z" fill="#2e7d32" stroke="#173d19" stroke-width="0.8"/>` + S.rect(x - 1, y + r * 0.6, 2, r * 0.5, {fill: "#5a3a1a"}),
    die_white: (x, y, r) => S.rect(x - r, y - r, 2 * r, 2 * r, {rx: 2, fill: "#fff", stroke: "#222"}) + S.circle(x, y, 1.4, {fill: "#222"}),
    die_blue: (x, y, r) => S.rect(x - r, y - r, 2 * r, 2 * r, {rx: 2, fill: "#2f6fd1", stroke: "#10306a"}) + S.circle(x, y, 1.4, {fill: "#fff"}),
  };
  const icon = (k, x, y, r) => (ICON[k] || (() => ""))(x, y, r === undefined ? 5.5 : r);

  // ---- effects as runs of tokens: {t: text} or {i: icon}
  const goodsTokens = (g, sign) => {
    const out = [];
    for (const k of GOODS) {
      const n = (g || {})[k] || 0;
      if (n) out.push({t: `${sign}${n}`}, {i: k});
    }
    return out;
  };
  const EFFECT_ICON = {SHIP: "ship", CONQUISTADOR: "conq", RELIGION: "cross"};
  // one cell's effects as lines of tokens: productions and actions on one line, each exchange
  // option on its own line (pay -> gain)
  function effectLines(effects) {
    const lines = [];
    let first = [];
    for (const e of effects || []) {
      if (e.kind === "PRODUCE") first = first.concat(goodsTokens(e.gain, "+"));
      else if (e.kind === "EXCHANGE") for (const o of e.options || []) lines.push(goodsTokens(o.pay, "").concat([{t: "→"}], goodsTokens(o.gain, "")));
      else if (EFFECT_ICON[e.kind]) first.push({i: EFFECT_ICON[e.kind]});
    }
    return (first.length ? [first] : []).concat(lines);
  }
  const effectWords = (e) => ({
    PRODUCE: () => "produces " + goodsWords(e.gain),
    EXCHANGE: () => "exchange " + (e.options || []).map((o) => `${goodsWords(o.pay)} for ${goodsWords(o.gain)}`).join(", or "),
    SHIP: () => "a Ship action", CONQUISTADOR: () => "a Conquistador action", RELIGION: () => "a Religion action",
  }[e.kind] || (() => S.cap(e.kind)))();
  const CHAR = FONT * 0.62, ICONW = 13;
  const tokWidth = (t) => (t.i ? ICONW : String(t.t).length * CHAR + 1);
  const runWidth = (run) => run.reduce((w, t) => w + tokWidth(t), 0);
  // break a run that is too wide between its groups (a number with its icon; "->" starts a group)
  function fit(lines, width) {
    const out = [];
    for (const run of lines) {
      if (runWidth(run) <= width) { out.push(run); continue; }
      const groups = [];
      for (const t of run) {
        const last = groups[groups.length - 1];
        if (last && (t.i || (last.length === 1 && last[0].t === "→"))) last.push(t); else groups.push([t]);
      }
      let cur = [];
      for (const g of groups) {
        if (cur.length && runWidth(cur.concat(g)) > width) { out.push(cur); cur = []; }
        cur = cur.concat(g);
      }
      if (cur.length) out.push(cur);
    }
    return out;
  }
  function drawRun(run, cx, y) {
    let x = cx - runWidth(run) / 2;
    const out = [];
    for (const t of run) {
      if (t.i) out.push(icon(t.i, x + ICONW / 2, y - 4, 5));
      else out.push(S.text(x, y, t.t, {font_size: FONT, fill: "#1c140c", font_weight: "bold"}));
      x += tokWidth(t);
    }
    return out.join("");
  }

  function cellTitle(c, ct) {
    const parts = [`(${c.row},${c.col}) ${TERRAIN_NAME[ct.terrain] || S.cap(ct.terrain)}${c.printed ? " (printed)" : " (development tile)"}`];
    for (const e of ct.effects || []) parts.push(effectWords(e));
    if (ct.colonists) parts.push(`${ct.colonists} colonist${ct.colonists > 1 ? "s" : ""}`);
    if (ct.end_points) parts.push(`${ct.end_points} points at the end of the game`);
    if (c.die && c.die !== "DIE_COLOR_UNSPECIFIED") parts.push(`a ${c.die.toLowerCase()} die on it (used this year)`);
    if (c.coins) parts.push(`${c.coins} coin${c.coins > 1 ? "s" : ""} on it (activated this year)`);
    return parts.join("; ");
  }

  // one colony cell (also the cells of the display's tiles, with show=false for no markers)
  function cell(c, x, y, s, hit) {
    const ct = c.content || {};
    const out = [S.rect(x + 1, y + 1, s - 2, s - 2, {rx: 3, fill: TERRAIN[ct.terrain] || "#f4ecd8",
      stroke: c.printed === false ? "#3b2a1a" : "#8a7a60", stroke_width: c.printed === false ? 2.2 : 1})];
    if (ct.end_points) out.push(S.rect(x + 3.5, y + 3.5, s - 7, s - 7, {rx: 3, fill: "none", stroke: "#7b2d8e", stroke_width: 2.5}));
    if (ct.terrain === "ROAD") {
      const n = ct.colonists || 0;
      for (let k = 0; k < n; k++) out.push(icon("colonist", x + s / 2 + (k - (n - 1) / 2) * 13, y + s / 2, 6));
    } else {
      const lines = fit(effectLines(ct.effects), s - 6);
      const lh = lines.length * (FONT + 3) > s - 4 ? FONT + 1 : FONT + 3, top = y + Math.max(FONT + 3, (s - lines.length * lh) / 2 + FONT - 1);
      lines.forEach((run, i) => out.push(drawRun(run, x + s / 2, top + i * lh)));
    }
    if (ct.end_points) out.push(S.text(x + s - 6, y + s - 6, String(ct.end_points), {text_anchor: "end", font_size: FONT, font_weight: "bold", fill: "#7b2d8e"}));
    if (c.die && c.die !== "DIE_COLOR_UNSPECIFIED") out.push(icon(c.die === "BLUE" ? "die_blue" : "die_white", x + 11, y + s - 11, 7));
    if (c.coins) {
      out.push(S.circle(x + s - 11, y + 11, 9, {fill: "#f0c64a", stroke: "#8a6a10"}));
      out.push(S.text(x + s - 11, y + 15.5, String(c.coins), {text_anchor: "middle", font_size: FONT, font_weight: "bold"}));
    }
    out.push(S.title(cellTitle(c, ct)));
    return S.g(out.join(""), {class: "cell", data_hit: hit});
  }

  function track(label, t, value, x, y, w, meta, players, deco, ctx, prevPlayers, hit) {
    const n = (t.length || 0) + 1, cw = w / n;
    const out = [S.text(x, y - 7, label, {font_size: 14, font_weight: "bold", fill: "#4a3520"})];
    if (hit) out.push(S.g(S.rect(x, y, w, 34, {fill: "#fff", opacity: 0.01}), {data_hit: hit}));
    for (let i = 0; i < n; i++) {
      const d = deco(i);
      out.push(S.g(S.rect(x + i * cw, y, cw - 2, 34, {rx: 3, fill: d.length ? "#e8d6a0" : "#efe3c4", stroke: "#cdbd9c"}) +
        S.text(x + i * cw + 4, y + 14, String(i), {font_size: FONT, fill: "#6a5a45"}) +
        d.map((k, j) => icon(k, x + i * cw + cw - 9 - j * 14, y + 9, 5)).join("") +
        S.title(`space ${i}${d.length ? ": " + d.map((k) => ({monk: "recruit a monk", gold: "gain 1 gold", tree: "solo goal (tree)"}[k] || k)).join(", ") : ""}`)));
    }
    players.forEach((p, k) => {
      const pos = Math.min(n - 1, value(p));
      const cx = x + pos * cw + 8 + (k % 4) * 12, cy = y + 26;
      out.push(S.g(S.circle(cx, cy, 5.5, {fill: S.seatColor(p.seat || 0), stroke: "#111"}) + S.title(`${S.name(meta, p.seat || 0)}: space ${value(p)}`), {class: "marker"}));
      const old = (prevPlayers || []).find((q) => (q.seat || 0) === (p.seat || 0));
      if (old && value(old) !== value(p)) out.push(S.mark(cx - 6, cy - 6, 12, 12, ctx, `${S.name(meta, p.seat || 0)} moved to space ${value(p)}`));
    });
    if (hit) out.push(out.splice(1, 1)[0]);  // the track's place on top (the play page)
    return out.join("");
  }

  function legend(x, y, w) {
    const items = [
      ...RES.map(([k]) => [k, PLURAL[k] || k]), ["coins", "coins"], ["points", "points"],
      ["colonist", "colonist"], ["cross", "Religion action"], ["conq", "Conquistador action"], ["ship", "Ship action"],
      ["die_white", "white die"], ["die_blue", "blue die"], ["monk", "monk symbol"], ["gold", "gold symbol (track)"],
    ];
    const out = [S.rect(x, y, w, 114, {rx: 6, fill: "#fffaf0", stroke: "#cdbd9c"}), S.text(x + 10, y + 18, "Legend", {font_size: 14, font_weight: "bold", fill: "#4a3520"})];
    const colw = (w - 20) / 6;
    items.slice(0, -1).forEach(([k, label], i) => {
      const cx = x + 10 + (i % 6) * colw, cy = y + 38 + Math.floor(i / 6) * 20;
      out.push(icon(k, cx + 6, cy - 4, 5.5) + S.text(cx + 16, cy, label, {font_size: FONT}));
    });
    let tx = x + 10;
    const ty = y + 100;
    for (const [k, c] of Object.entries(TERRAIN)) {
      out.push(S.rect(tx, ty - 11, 14, 14, {rx: 2, fill: c, stroke: "#8a7a60"}) + S.text(tx + 18, ty, TERRAIN_NAME[k], {font_size: FONT}));
      tx += 34 + TERRAIN_NAME[k].length * 7;
    }
    out.push(S.rect(tx, ty - 11, 14, 14, {rx: 2, fill: "#f4ecd8", stroke: "#7b2d8e", stroke_width: 2.5}) + S.text(tx + 18, ty, "points at the end", {font_size: FONT}));
    tx += 140;
    out.push(S.rect(tx, ty - 11, 14, 14, {rx: 2, fill: "#f4ecd8", stroke: "#3b2a1a", stroke_width: 2.2}) + S.text(tx + 18, ty, "development tile", {font_size: FONT}));
    tx += 130;
    out.push(S.text(tx, ty, "a → b: pay a, gain b", {font_size: FONT}));
    return S.g(out.join(""), {id: "legend", class: "legend"});
  }

  function resourcesRow(p, x, y, w, ctx, old) {
    const seat = p.seat || 0;
    const out = [S.rect(x + 4, y - 15, w - 8, 38, {fill: "#fff", opacity: 0.01})];
    const res = p.resources || {};
    const items = RES.map(([k]) => [k, PLURAL[k] || k, res[k] || 0]).concat([["coins", "coins", p.coins || 0]]);
    const colw = (w - 16) / 3;
    items.forEach(([k, label, n], i) => {
      const cx = x + 8 + (i % 3) * colw, cy = y + Math.floor(i / 3) * 19;
      out.push(S.g(S.rect(cx, cy - 13, colw - 4, 17, {fill: "#fff", opacity: 0.01}) + icon(k, cx + 7, cy - 4, 6) + S.text(cx + 18, cy, `${label} ${n}`, {font_size: FONT, class: k === "coins" ? "coins" : "resource"}) + S.title(`${label}: ${n}`), {data_hit: `res:${seat}:${k}`}));
    });
    // a resource is where it is sold or bought (the play page)
    const row = S.g(out.join(""), {class: "resources"});
    if (old && (S.differs(old.resources, p.resources) || old.coins !== p.coins)) return row + S.mark(x + 4, y - 15, w - 8, 38, ctx, "resources or coins");
    return row;
  }

  // one player's colony panel: [svg, height]
  function colony(v, p, meta, x, y, w, ctx) {
    const seat = p.seat || 0;
    const old = ((S.prev(ctx) || {}).players || []).find((q) => (q.seat || 0) === seat);
    const s = Math.floor((w - 30) / 6);
    const gx = x + 22, gy = y + 34;
    const out = [];
    const head = `${S.name(meta, seat)} · board ${p.colony_board}`;
    out.push(S.g(S.rect(x, y, w, 26, {rx: 8, fill: S.seatColor(seat)}) +
      S.text(x + 10, y + 18, head, {font_size: 14, fill: "#fff", font_weight: "bold"}), {class: "player-head"}));
    if (v.first_player === seat) out.push(S.g(S.pennant(x + 18 + head.length * 8.4, y + 7, "#fff") + S.title("first player")));
    const ptxt = `${p.points} points`;
    out.push(S.g(S.star(x + w - 24 - ptxt.length * 8.2, y + 13, 8, {fill: "#fff", stroke: "#fff"}) + S.text(x + w - 10, y + 18, ptxt, {font_size: 14, fill: "#fff", font_weight: "bold", text_anchor: "end", class: "points"})));
    if (old && old.points !== p.points) out.push(S.mark(x + w - 82, y + 3, 76, 20, ctx, "points"));
    // the row and column numbers: where a die activates a line (the play page)
    for (let i = 0; i < 6; i++) {
      out.push(S.g(S.rect(gx - 21, gy + i * s + 2, 19, s - 4, {rx: 3, fill: "#fff", opacity: 0.01}) +
        S.text(gx - 11, gy + i * s + s / 2 + 4, String(i + 1), {font_size: FONT, fill: "#2f4f8a", text_anchor: "middle"}) + S.title(`row ${i + 1}`), {class: "line", data_hit: `line:${seat}:ROW:${i + 1}`}));
      out.push(S.g(S.rect(gx + i * s + 2, gy + 6 * s + 1, s - 4, 18, {rx: 3, fill: "#fff", opacity: 0.01}) +
        S.text(gx + i * s + s / 2, gy + 6 * s + 14, String(i + 1), {font_size: FONT, fill: "#2f4f8a", text_anchor: "middle"}) + S.title(`column ${i + 1}`), {class: "line", data_hit: `line:${seat}:COLUMN:${i + 1}`}));
    }
    out.push(S.rect(gx, gy, 6 * s, 6 * s, {fill: "#efe6cf", stroke: "#b39b6b"}));
    const before = {};
    for (const c of (old && old.colony) || []) before[`${c.row},${c.col}`] = c;
    const drawn = new Set((p.colony || []).map((c) => `${c.row},${c.col}`));
    for (let r = 1; r <= 6; r++) {
      for (let c = 1; c <= 6; c++) {  // the empty cells, where tiles and roads go
        if (!drawn.has(`${r},${c}`)) out.push(S.g(S.rect(gx + (c - 1) * s + 1, gy + (r - 1) * s + 1, s - 2, s - 2, {fill: "#efe6cf", rx: 3}) + S.title(`(${r},${c}) empty`), {class: "empty-cell", data_hit: `cell:${seat}:${r},${c}`}));
      }
    }
    for (const c of p.colony || []) {
      const cx = gx + (c.col - 1) * s, cy = gy + (c.row - 1) * s;
      out.push(cell(c, cx, cy, s, `cell:${seat}:${c.row},${c.col}`));
      if (old && S.differs(before[`${c.row},${c.col}`], c)) out.push(S.mark(cx + 1, cy + 1, s - 2, s - 2, ctx, `(${c.row},${c.col})`));
    }
    let ly = gy + 6 * s + 36;
    out.push(resourcesRow(p, x, ly, w, ctx, old));
    ly += 42;
    const line = (txt, a) => { out.push(S.text(x + 10, ly, txt, Object.assign({font_size: FONT}, a || {}))); ly += 17; };
    const blue = (p.blue_dice || []).join(", ");
    line(`blue dice: ${blue || "none left"} (${p.blue_unlocked} unlocked) · white dice used ${p.white_used}/${p.white_limit}`);
    line(`monks left ${p.monks_left} · next activation costs ${p.activation_cost} coin${p.activation_cost === 1 ? "" : "s"}`);
    line(p.retreat_space >= 0 ? `retreated to space ${p.retreat_space + 1}` : "on the market square (still playing this year)");
    const docks = v.docks || [];
    const per = (p.port && p.port.ships_per_dock) || [];
    line(`port: ${per.map((n, i) => `${DOCK[(docks[i] || {}).bonus] || "dock " + (i + 1)} ${n}`).join(" · ")}`);
    const own = (p.port && p.port.own_ships) || [];
    if (own.length) line(`ships: ${own.map((o) => `${DOCK[(docks[o.dock || 0] || {}).bonus] || ""} ${(o.ship || {}).points || 0} pts`).join(", ")}`, {fill: "#1d4f9a", class: "own-ships"});
    else if (per.some((n) => n > 0)) line("ships face down: points hidden", {fill: "#7a6a55"});
    if ((p.scholars || []).length) line(`scholars: ${p.scholars.map(nice).join(", ")}`);
    if (old && (S.differs(old.port, p.port) || old.retreat_space !== p.retreat_space || old.monks_left !== p.monks_left)) out.push(S.mark(x + 4, gy + 6 * s + 64, w - 8, ly - (gy + 6 * s + 64) - 8, ctx, "port, monks or retreat"));
    if (S.sees(v, seat) && !(v.final || []).length) {
      // the seat's own markers: where it ends its turn and where it lets an effect go by (the
      // play page; an exchange is declined on its building)
      ly += 4;
      const marker = (mx, label, hit, fill) => out.push(S.g(S.rect(mx, ly - 14, 130, 24, {rx: 12, fill, stroke: "#3b2a1a", stroke_width: 1.5}) +
        S.text(mx + 65, ly + 2, label, {font_size: FONT, text_anchor: "middle", fill: "#fff", font_weight: "bold"}) + S.title(label), {class: "marker-button", data_hit: hit}));
      marker(x + 10, "End turn", `end:${seat}`, "#6a4a2a");
      marker(x + 150, "Let it go by", `pass:${seat}`, "#7a6a55");
      ly += 22;
    }
    const h = ly - y + 2;
    return [S.rect(x, y, w, h, {rx: 8, fill: "#fffaf0", stroke: S.seatColor(seat), stroke_width: seat === v.current_seat ? 4 : 2}) + out.join(""), h];
  }

  // the set-up draft, while it lasts: the town hall + Scholar lots (advanced setup) and the
  // A-side colony boards (colony_boards=pick), each where the seat picks it (the play page)
  function draftPanels(v, y, out) {
    const lots = (v.lots || []);
    if (lots.some((l) => !l.taken)) {
      out.push(S.text(16, y + 14, "Town hall + Scholar lots (advanced setup)", {font_size: 14, font_weight: "bold", fill: "#4a3520"}));
      // five lots a row, as tall as the tallest town hall
      const rows = Math.max(1, ...lots.map((l) => Math.max(0, ...(l.town_hall || []).map((c) => (c.dr || 0) + 1))));
      const ts = 58, bw = 180, bh = rows * ts + 34;
      lots.forEach((l, i) => {
        const cells = l.town_hall || [];
        const x = 16 + (i % 5) * (bw + 10), yy = y + 24 + Math.floor(i / 5) * (bh + 12);
        const parts = [S.rect(x, yy, bw, bh, {rx: 5, fill: l.taken ? "#eee" : "#fffaf0", stroke: "#b39b6b", stroke_dasharray: l.taken ? "4 3" : undefined})];
        if (!l.taken) parts.push(cells.map((c) => cell({row: (c.dr || 0) + 1, col: (c.dc || 0) + 1, content: c.content, printed: false}, x + 4 + (c.dc || 0) * ts, yy + 4 + (c.dr || 0) * ts, ts)).join(""));
        parts.push(S.text(x + 6, yy + bh - 8, `${i + 1}. ${l.taken ? "taken" : "Scholar " + nice(l.scholar)}`, {font_size: FONT}));
        parts.push(S.title(`lot ${i + 1}: town hall and Scholar ${nice(l.scholar)}${l.taken ? " (taken)" : ""}`));
        out.push(S.g(parts.join(""), l.taken ? {class: "lot taken"} : {class: "lot", data_hit: `lot:${i}`}));
      });
      y += 24 + Math.ceil(lots.length / 5) * (bh + 12) + 10;
    }
    const boards = (v.colony_boards || []);
    if (boards.some((b) => !b.taken)) {
      out.push(S.text(16, y + 14, "Colony boards to choose (A side)", {font_size: 14, font_weight: "bold", fill: "#4a3520"}));
      const s = 24;
      boards.forEach((b, i) => {
        const x = 16 + (i % 5) * (6 * s + 24), yy = y + 24 + Math.floor(i / 5) * (6 * s + 40);
        const parts = [S.rect(x - 4, yy - 4, 6 * s + 8, 6 * s + 26, {rx: 5, fill: b.taken ? "#eee" : "#efe6cf", stroke: "#b39b6b", stroke_dasharray: b.taken ? "4 3" : undefined})];
        for (const c of b.cells || []) {
          const t = (c.content || {}).terrain;
          parts.push(S.rect(x + ((c.col || 1) - 1) * s + 1, yy + ((c.row || 1) - 1) * s + 1, s - 2, s - 2, {rx: 2, fill: TERRAIN[t] || "#f4ecd8", stroke: "#8a7a60", stroke_width: 0.6}));
        }
        parts.push(S.text(x, yy + 6 * s + 16, `${i + 1}. ${b.id || "board"}${b.taken ? " (taken)" : ""}`, {font_size: FONT}));
        parts.push(S.title(`colony board ${b.id || i + 1}${b.taken ? " (taken)" : ""}`));
        out.push(S.g(parts.join(""), b.taken ? {class: "colony-board taken"} : {class: "colony-board", data_hit: `board:${i}`}));
      });
      y += 24 + Math.ceil(boards.length / 5) * (6 * s + 40);
    }
    return y;
  }

  window.RefereeBoards.santa_maria = function (v, meta, ctx) {
    const ps = v.players || [];
    const pv = S.prev(ctx);
    const out = [];
    const rel = v.religion_track || {}, con = v.conquistador_track || {};
    let y = 30;
    out.push(track("Religion track", rel, (p) => p.religion || 0, 16, y, W - 32, meta, ps,
      (i) => ((rel.monk_symbols || []).includes(i) ? ["monk"] : []), ctx, pv && pv.players, "religion"));
    y += 64;
    const table = (v.conquistador_points || []).join(" / ");
    out.push(track(`Conquistador track${table ? " (points this year: " + table + ")" : ""}`, con, (p) => p.conquistador || 0, 16, y, W - 32, meta, ps,
      (i) => [(con.gold_symbols || []).includes(i) ? "gold" : "", (con.trees || []).includes(i) && ps.length === 1 ? "tree" : ""].filter(Boolean), ctx, pv && pv.players));
    // docks and their face-up ships
    y += 64;
    out.push(S.text(16, y, "Docks: face-up ship (cost, points) and the bonus each ship in a port gives on retreat", {font_size: 14, font_weight: "bold", fill: "#4a3520"}));
    (v.docks || []).forEach((d, i) => {
      const slot = (v.ship_slots || []).find((q) => (q.dock || 0) === (d.dock || 0)) || {};
      const x = 16 + i * 192, yy = y + 8;
      const bonus = d.bonus === "coins" || d.bonus === "points" ? `+${goodsWords(d.gain)}` : `a ${DOCK[d.bonus]} action`;
      const short = d.bonus === "coins" || d.bonus === "points" ? ` (+${Object.values(d.gain || {}).reduce((a, b) => a + (b || 0), 0)})` : "";
      const parts = [S.rect(x, yy, 184, 58, {rx: 5, fill: "#d6e6f2", stroke: "#5a7fa0"}),
        icon(d.bonus === "religion" ? "cross" : d.bonus === "conquistador" ? "conq" : d.bonus, x + 12, yy + 13, 6),
        S.text(x + 24, yy + 18, `${i + 1}. ${DOCK[d.bonus] || d.bonus} dock${short}`, {font_size: FONT})];
      if (slot.present) {
        parts.push(icon("ship", x + 12, yy + 40, 6));
        parts.push(drawRun(goodsTokens((slot.ship || {}).cost, "").concat([{t: "→"}, {t: String((slot.ship || {}).points || 0)}, {i: "points"}]), x + 24 + runWidth(goodsTokens((slot.ship || {}).cost, "").concat([{t: "→"}, {t: "0"}, {i: "points"}])) / 2, yy + 44));
      } else parts.push(S.text(x + 24, yy + 44, "no ship left", {font_size: FONT, fill: "#6a5a45"}));
      parts.push(S.title(`dock ${i + 1} (${DOCK[d.bonus]}): ${slot.present ? `ship costing ${goodsWords(slot.ship.cost)}, ${slot.ship.points} points at the end` : "no face-up ship"}; each ship of this dock in a port gives ${bonus} on retreat`));
      out.push(S.g(parts.join(""), {class: "dock", data_hit: `dock:${d.dock || 0}`}));
      const ps0 = pv && (pv.ship_slots || []).find((q) => (q.dock || 0) === (d.dock || 0));
      if (pv && S.differs(ps0, slot)) out.push(S.mark(x, yy, 184, 58, ctx, "ship taken"));
    });
    const dice = (v.white_dice || []);
    const dx = 16 + 4 * 192 + 4;
    out.push(S.text(dx, y + 24, `ship pile ${v.ships_left} · road tiles ${v.road_tiles_left}`, {font_size: FONT}));
    out.push(S.text(dx, y + 44, "white dice:", {font_size: FONT}));
    dice.forEach((d, i) => out.push(S.rect(dx + 70 + i * 22, y + 31, 18, 18, {rx: 3, fill: "#fff", stroke: "#222"}) + S.text(dx + 79 + i * 22, y + 45, String(d), {font_size: FONT, text_anchor: "middle", font_weight: "bold"})));
    if ((v.shared_blue_dice || []).length) {
      out.push(S.text(dx, y + 64, "blue pool:", {font_size: FONT}));
      v.shared_blue_dice.forEach((d, i) => out.push(S.rect(dx + 70 + i * 22, y + 51, 18, 18, {rx: 3, fill: "#2f6fd1", stroke: "#10306a"}) + S.text(dx + 79 + i * 22, y + 65, String(d), {font_size: FONT, text_anchor: "middle", font_weight: "bold", fill: "#fff"})));
    }
    if (pv && (S.differs(pv.white_dice, v.white_dice) || S.differs(pv.shared_blue_dice, v.shared_blue_dice))) out.push(S.mark(dx - 2, y + 28, W - 16 - dx, 24, ctx, "a die taken"));
    // retreat spaces
    y += 92;
    out.push(S.text(16, y, "Retreat spaces (the top one is first player next year)", {font_size: 14, font_weight: "bold", fill: "#4a3520"}));
    (v.retreat_spaces || []).forEach((r, i) => {
      const x = 16 + i * 194, yy = y + 8;
      const occ = r.occupant >= 0;
      const what = r.action === "coins" ? `gain ${goodsWords(r.gain)}` : RETREAT[r.action] || r.action;
      out.push(S.g(S.rect(x, yy, 186, 28, {rx: 5, fill: occ ? S.seatColor(r.occupant) : "#efe3c4", stroke: "#b39b6b"}) +
        S.text(x + 8, yy + 19, `${i + 1}. ${what}${occ ? " · " + S.name(meta, r.occupant) : ""}`, {font_size: FONT, fill: occ ? "#fff" : "#222"}) +
        S.title(`retreat space ${i + 1}: ${what}${occ ? "; taken by " + S.name(meta, r.occupant) : ""}`), {class: "retreat", data_hit: `retreat:${i}`}));
      const pr = pv && (pv.retreat_spaces || [])[i];
      if (pr && pr.occupant !== r.occupant) out.push(S.mark(x, yy, 186, 28, ctx, `retreat space ${i + 1}`));
    });
    // monk spaces
    y += 58;
    out.push(S.text(16, y, "Monk spaces: Scholars, Bishops, Missionary camps (2 coins to each monk already there)", {font_size: 14, font_weight: "bold", fill: "#4a3520"}));
    (v.monk_spaces || []).forEach((m, i) => {
      const x = 16 + (i % 5) * 194, yy = y + 8 + Math.floor(i / 5) * 46;
      const kind = m.kind === "camp" ? "Missionary camp" : m.kind === "bishop" ? "Bishop (-2 pts)" : `Scholar${m.points ? " · " + m.points + " pts" : ""}`;
      const what = m.kind === "camp" ? `+${goodsWords(m.reward)}` : nice(m.tile);
      const label = `${kind}: ${what}`;
      const parts = [S.rect(x, yy, 186, 40, {rx: 4, fill: m.kind === "camp" ? "#e9dfc3" : m.kind === "bishop" ? "#e6d3ea" : "#d8e6cc", stroke: "#b39b6b"}),
        S.text(x + 6, yy + 16, kind, {font_size: FONT, fill: "#5a4a35"}), S.text(x + 6, yy + 33, what, {font_size: FONT, font_weight: "bold"})];
      (m.monks || []).forEach((s, k) => parts.push(S.circle(x + 176 - k * 13, yy + 12, 5.5, {fill: S.seatColor(s), stroke: "#111"})));
      parts.push(S.title(`${label}${(m.monks || []).length ? "; monks of " + m.monks.map((s) => S.name(meta, s)).join(", ") : ""}`));
      out.push(S.g(parts.join(""), {class: "monk-space", data_hit: `monk:${i}`}));
      const pm = pv && (pv.monk_spaces || [])[i];
      if (pm && S.differs(pm.monks, m.monks)) out.push(S.mark(x, yy, 186, 40, ctx, "monk placed"));
    });
    y += 8 + Math.ceil((v.monk_spaces || []).length / 5) * 46 + 22;
    // the display of development tiles
    out.push(S.text(16, y, `Development tiles (year ${v.year} of 3): doubles cost 2 wood, triples 2 wood + 1 wheat · piles: ${v.doubles_left} doubles, ${v.triples_left} triples`, {font_size: 14, font_weight: "bold", fill: "#4a3520"}));
    const ts = 60;
    let dx0 = 16, rowY = y + 12, tileRowH = 0, triples = false;
    (v.display || []).forEach((t, i) => {
      const cells = t.cells || [];
      const cols = Math.max(2, ...cells.map((c) => (c.dc || 0) + 1)), rows = Math.max(1, ...cells.map((c) => (c.dr || 0) + 1));
      if ((t.triple && !triples) || dx0 + cols * ts > W - 16) { triples = triples || t.triple; if (dx0 > 16) { rowY += tileRowH + 12; tileRowH = 0; dx0 = 16; } }
      const x = dx0, yy = rowY, tw = cols * ts, th = rows * ts;
      if (!t.present) out.push(S.g(S.rect(x, yy, 2 * ts, ts, {rx: 3, fill: "none", stroke: "#cdbd9c", stroke_dasharray: "3 2"}) + S.title("bought this year")));
      else out.push(S.g(cells.map((c) => cell({row: (c.dr || 0) + 1, col: (c.dc || 0) + 1, content: c.content, printed: false}, x + (c.dc || 0) * ts, yy + (c.dr || 0) * ts, ts)).join(""), {class: "display-tile", data_hit: `display:${i}`}));
      const pd = pv && (pv.display || [])[i];
      if (pd && pd.present !== t.present) out.push(S.mark(x, yy, t.present ? tw : 2 * ts, t.present ? th : ts, ctx, "development tile bought"));
      dx0 += (t.present ? tw : 2 * ts) + 14;
      tileRowH = Math.max(tileRowH, t.present ? th : ts);
    });
    y = rowY + tileRowH + 10;
    y = draftPanels(v, y, out);
    out.push(legend(16, y, W - 32));
    y += 130;
    // colonies, two per row (legible cells: about 75 units)
    const per = 2, cw = (W - 32 - 14) / per;
    let rowTop = y, rowH = 0;
    ps.forEach((p, i) => {
      if (i && i % per === 0) { rowTop += rowH + 14; rowH = 0; }
      const [svg, h] = colony(v, p, meta, 16 + (i % per) * (cw + 14), rowTop, cw, ctx);
      rowH = Math.max(rowH, h);
      out.push(svg);
    });
    let fy = rowTop + rowH + 24;
    const pend = v.pending && v.pending.kind ? ` (${v.pending.kind.replace("santa_maria.", "").replace(/_/g, " ")})` : "";
    out.push(S.text(16, fy, `${S.cap(v.phase)} · year ${v.year}${v.current_seat >= 0 ? " · to act: " + S.name(meta, v.current_seat) : ""}${pend}`, {font_size: 14, id: "status"}));
    fy += 10;
    return S.svg(W, fy, out.join(""), "Santa Maria board");
  };

  // ---- the play page (play.js): where each legal move happens on this board. A die activates
  // the row or column whose number is clicked (the chooser then names the die); a tile is
  // placed by clicking the cell its first cell goes to (the chooser names the turn).
  const P = window.RefereePlay = window.RefereePlay || {hits: {}, confirm: {}};
  // the exchange building being used (View.pending names it)
  const building = (v, seat) => `cell:${seat}:${(v.pending && v.pending.row) || 0},${(v.pending && v.pending.col) || 0}`;
  P.hits.santa_maria = function (kind, f, v, seat) {
    const at = (r, c) => `cell:${seat}:${r || 0},${c || 0}`;
    switch (kind) {
      case "activate_building": case "place_tile": case "place_road": case "place_die": case "recover_coins":
        return at(f.row, f.col);
      case "move_die": return at(f.from_row, f.from_col);
      case "use_die": return `line:${seat}:${f.line}:${f.target}`;
      case "expand": return `display:${f.slot || 0}`;
      case "ship": return `dock:${((v.ship_slots || [])[f.slot || 0] || {}).dock || 0}`;
      case "shift_ship": return `dock:${f.dock || 0}`;
      case "retreat": return `retreat:${f.space || 0}`;
      case "religion": return "religion";
      case "recruit_monk": return `monk:${f.space || 0}`;
      case "sell": case "buy": return `res:${seat}:${String(f.resource || "").toLowerCase()}`;
      case "exchange": return building(v, seat);
      case "decline":  // an exchange on its building; a ship, a monk, a road, Mathematics let go by
        return v.pending && v.pending.kind === "santa_maria.exchange" ? building(v, seat) : `pass:${seat}`;
      case "end_turn": return `end:${seat}`;
      case "choose_board": return `board:${f.board || 0}`;
      case "draft_lot": return `lot:${f.lot || 0}`;
      default: return null;
    }
  };
  // the year's end for you, the turn's end, an effect given up
  P.confirm.santa_maria = new Set(["retreat", "end_turn", "decline"]);
})();
