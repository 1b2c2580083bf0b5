// Goa board: the 5x5 auction board with its tiles, auction tokens and the flag; each player's
// development (progress) board with the printed yields of the match's component sheet, their
// plantations and colonies with spice sacks, ships, colonists, cards and tiles. Ducats are
// secret until the final scoring: "?" in the spectator's view; a seat's view (a replay from that
// seat) shows that seat's ducats and Expedition hand. The lot on auction has a dashed gold frame;
// what the last move changed has an outline in the mover's colour (ctx from viewer.js).
(function () {
  "use strict";
  const S = window.RefereeSVG;
  const SPICE = {GINGER: "#e3b04b", PEPPER: "#2f2f2f", CINNAMON: "#9c5b2e", NUTMEG: "#c98a5a", CLOVE: "#7a2f3b"};
  const SP_ABBR = {GINGER: "Gi", PEPPER: "Pe", CINNAMON: "Ci", NUTMEG: "Nu", CLOVE: "Cl"};
  const COLS = ["SHIPS", "HARVEST", "TAXES", "EXPEDITION", "COLONISTS"];
  const COL_LABEL = {SHIPS: "Ships", HARVEST: "Harvest", TAXES: "Taxes", EXPEDITION: "Exped.", COLONISTS: "Colon."};
  const RED = new Set(["RED_SHIP", "RED_COLONIST", "RED_SPICE", "RED_EXPEDITION", "RED_DUCATS"]);
  const BLUE = new Set(["SHIPS_TILE", "COLONISTS_TILE", "SHIPS_OR_COLONISTS", "FAVOR", "SETTLEMENT", "EXTRA_ACTIONS_TILE", "EXPEDITIONS_TILE"]);
  const ONCE = new Set(["ESPIONAGE", "EXTRA_HARVEST", "RESUPPLY", "VICE_KING", "DUTY"]);
  const tileColor = (t) => t.type === "PLANTATION" || t.type === "CROP_ROTATION" ? "#6c9a3c" :
    RED.has(t.type) ? "#b8322a" : BLUE.has(t.type) ? "#2f63a8" : ONCE.has(t.type) ? "#b07a1c" : "#6d4b8d";

  function wrap(s, n) {
    const words = String(s).split(" "), lines = [];
    let cur = "";
    for (const w of words) {
      if ((cur + " " + w).trim().length > n && cur) { lines.push(cur); cur = w; } else cur = (cur + " " + w).trim();
    }
    if (cur) lines.push(cur);
    return lines;
  }

  function tileBox(t, x, y, w, h) {
    if (!t || !t.type || t.type === "TILE_TYPE_UNSPECIFIED") return "";
    const c = tileColor(t);
    const out = [S.rect(x, y, w, h, {rx: 6, fill: "#fbf4df", stroke: c, stroke_width: 4})];
    out.push(S.rect(x, y, w, 14, {rx: 5, fill: c}));
    out.push(S.text(x + w / 2, y + 11, `${t.phase || ""}${t.vp ? " · " + t.vp + " VP" : ""}${t.n ? " · " + t.n : ""}`, {text_anchor: "middle", font_size: 11, fill: "#fff"}));
    let label = String(t.name || S.cap(t.type));
    if (t.type === "PLANTATION") label = `${["", "Single", "Double", "Triple"][t.fields] || ""} ${S.cap(t.spice)}`;
    wrap(label, 12).slice(0, 2).forEach((ln, i) => out.push(S.text(x + w / 2, y + 29 + i * 13, ln, {text_anchor: "middle", font_size: 11.5, fill: "#222"})));
    if (t.type === "PLANTATION") {
      for (let k = 0; k < (t.fields || 0); k++) out.push(S.circle(x + w / 2 + (k - (t.fields - 1) / 2) * 16, y + h - 14, 6.5, {fill: SPICE[t.spice] || "#aaa", stroke: "#222", stroke_width: 0.6}));
    }
    out.push(S.title(t.name || t.type));
    return S.g(out.join(""), {class: "goa-tile"});
  }

  function flag(x, y, seat) {
    return S.g(`<line x1="${x}" y1="${y + 16}" x2="${x}" y2="${y - 18}" stroke="#3b2a1a" stroke-width="2.5"/>` +
      `<path d="M${x},${y - 18} L${x + 20},${y - 11} L${x},${y - 4} Z" fill="${S.seatColor(seat)}" stroke="#222"/>` + S.title("the flag"), {class: "flag"});
  }

  const CARD = {
    CARD_SHIPS: (c) => `take ${c.amount} ships`, CARD_COLONISTS: (c) => `take ${c.amount} colonists`,
    CARD_DUCATS: (c) => `take ${c.amount} ducats`, CARD_SPICES: (c) => `take ${c.amount} spices`,
    CARD_SELL: (c) => `sell spices at ${c.amount}`, CARD_PROGRESS_DUCATS: (c) => `progress for ${c.price} ducats`,
    CARD_HARVEST_MIX: () => "mixed harvest", CARD_COLONY_EXTRA: () => "+1 colony card",
    CARD_PROGRESS_SHIPS_ONLY: () => "progress: ships only", CARD_PROGRESS_SPICES_ONLY: () => "progress: spices only",
  };
  const cardText = (c) => (CARD[c.effect] || (() => S.cap(c.effect)))(c);
  const prevPlayer = (ctx, seat) => ((S.prev(ctx) || {}).players || []).find((q) => (q.seat || 0) === seat);

  function auctionBoard(v, meta, x0, y0, ctx) {
    const C = 86, E = 34;
    const out = [S.text(x0, y0 - 10, `Auction board · round ${v.round} of 8 (tiles ${v.tile_phase || "A"})`, {font_size: 15, font_weight: "bold", fill: "#4a3520"})];
    out.push(S.rect(x0, y0, 2 * E + 5 * C, 2 * E + 5 * C, {rx: 10, fill: "#e9dcb9", stroke: "#b39b6b", stroke_width: 2}));
    // edge spaces
    for (let i = 0; i < 5; i++) {
      // each edge space is where the flag may go (data-hit: the play page, play.js)
      for (const [cx, cy, r, c] of [[x0 + E + i * C + C / 2, y0 + E / 2, -1, i], [x0 + E + i * C + C / 2, y0 + E * 1.5 + 5 * C, 5, i], [x0 + E / 2, y0 + E + i * C + C / 2, i, -1], [x0 + E * 1.5 + 5 * C, y0 + E + i * C + C / 2, i, 5]])
        out.push(S.g(S.circle(cx, cy, 12, {fill: "#e9dcb9", stroke: "#b39b6b", stroke_dasharray: "2 2"}), {class: "edge", data_hit: `edge:${r},${c}`}));
    }
    const before = {};
    for (const sq of (S.prev(ctx) || {}).grid || []) before[`${(sq.cell || {}).row || 0},${(sq.cell || {}).col || 0}`] = sq;
    const marks = [];
    const a = v.auction;
    let lotAt = null;
    for (const sq of v.grid || []) {
      const r = (sq.cell && sq.cell.row) || 0, c = (sq.cell && sq.cell.col) || 0;
      const x = x0 + E + c * C, y = y0 + E + r * C;
      const old = before[`${r},${c}`];
      if (old && S.differs(old, sq)) {
        const what = sq.token_number && old.token_number !== sq.token_number ? `${S.name(meta, sq.token_seat)} placed token ${sq.token_number}` : old.tile && !sq.tile ? `${old.tile.name || "tile"} taken` : "changed";
        marks.push(S.mark(x + 2, y + 2, C - 4, C - 4, ctx, what));
      }
      if (a && !a.is_flag && a.lot && sq.token_number === a.lot) marks.push(S.lot(x + 1, y + 1, C - 2, C - 2, `on auction: lot ${a.lot}${sq.tile ? " (" + (sq.tile.name || S.cap(sq.tile.type)) + ")" : ""}`));
      const cell = [S.rect(x + 2, y + 2, C - 4, C - 4, {rx: 6, fill: "#f3ead2", stroke: "#cdbd9c"})];
      if (sq.tile) cell.push(tileBox(sq.tile, x + 4, y + 4, C - 8, C - 8));
      if (sq.bonanza_face_down) cell.push(S.rect(x + C - 22, y + 4, 18, 18, {fill: "#5a4630", rx: 3}));
      if (sq.token_seat !== undefined && sq.token_seat >= 0 && sq.token_number) {
        cell.push(S.g(S.circle(x + C - 16, y + C - 18, 11, {fill: S.seatColor(sq.token_seat), stroke: "#111", stroke_width: 1.5}) +
          S.text(x + C - 16, y + C - 14, String(sq.token_number), {text_anchor: "middle", font_size: 12, fill: "#fff", font_weight: "bold"}) +
          S.title(`${S.name(meta, sq.token_seat)}'s token ${sq.token_number}`), {class: "token"}));
      }
      out.push(S.g(cell.join(""), {class: "square", data_hit: `cell:${r},${c}`}));
      // the lot on auction: where the play page bids, passes or keeps it
      if (a && !a.is_flag && a.lot && sq.token_number === a.lot) lotAt = [x + 2, y + 2, C - 4, C - 4];
    }
    if (v.flag_cell) {
      const r = v.flag_cell.row || 0, c = v.flag_cell.col || 0;
      const at = (k) => (k < 0 ? E / 2 : k > 4 ? E + 5 * C + E / 2 : E + k * C + C / 2);
      const fx = x0 + at(c), fy = y0 + at(r);
      const inside = r >= 0 && r < 5 && c >= 0 && c < 5;
      out.push(flag(inside ? fx - 20 : fx, inside ? fy - 10 : fy, v.first_player));
      const pf = (S.prev(ctx) || {}).flag_cell;
      const fxx = inside ? fx - 20 : fx, fyy = inside ? fy - 10 : fy;
      if (S.prev(ctx) && S.differs(pf, v.flag_cell)) marks.push(S.mark(fxx - 6, fyy - 20, 28, 38, ctx, "the flag placed"));
      if (a && a.is_flag) { marks.push(S.lot(fxx - 6, fyy - 20, 28, 38, "on auction: the flag")); lotAt = [fxx - 6, fyy - 20, 28, 38]; }
    }
    if (lotAt) out.push(S.g(S.rect(...lotAt, {rx: 6, fill: "#fff", opacity: 0.01}) + S.title("the lot on auction"), {class: "lot", data_hit: "auction"}));
    return out.join("") + marks.join("");
  }

  function progressBoard(v, p, x, y, ctx) {
    const cols = (v.board && v.board.columns) || [];
    const rowVp = (v.board && v.board.row_vp) || [];
    const cw = 50, rh = 24;
    const out = [];
    const old = prevPlayer(ctx, p.seat || 0);
    COLS.forEach((name, j) => out.push(S.text(x + 26 + j * cw + cw / 2, y + 10, COL_LABEL[name], {text_anchor: "middle", font_size: 11, fill: "#4a3520"})));
    for (let r = 0; r < 5; r++) {
      const ry = y + 16 + r * rh;
      out.push(S.text(x + 2, ry + 16, `${rowVp[r] || 0}★`, {font_size: 11, fill: "#7a5a20"}));
      COLS.forEach((name, j) => {
        const col = cols[j] || {};
        const here = ((p.rows || [])[j] || 1) === r + 1;
        const yld = (col.yield || [])[r];
        const extra = name === "EXPEDITION" && col.hand_limit ? `/${col.hand_limit[r]}` : "";
        out.push(S.rect(x + 26 + j * cw, ry, cw - 3, rh - 3, {rx: 3, fill: here ? S.seatColor(p.seat || 0) : "#efe3c4", stroke: "#cdbd9c"}));
        out.push(S.text(x + 26 + j * cw + (cw - 3) / 2, ry + 15, `${yld === undefined ? "" : yld}${extra}`, {text_anchor: "middle", font_size: 11, fill: here ? "#fff" : "#5a4a35", font_weight: here ? "bold" : "normal"}));
        if (here && old && ((old.rows || [])[j] || 1) !== r + 1) out.push(S.mark(x + 26 + j * cw, ry, cw - 3, rh - 3, ctx, `${COL_LABEL[name]} marker moved down`));
      });
    }
    // each column is the place of its action and of progress in it (the play page)
    COLS.forEach((name, j) => out.push(S.g(S.rect(x + 26 + j * cw, y, cw - 3, 16 + 5 * rh, {fill: "#fff", opacity: 0.01}) + S.title(`${COL_LABEL[name]} column`), {class: "column", data_hit: `col:${p.seat || 0}:${name}`})));
    return out.join("");
  }

  function land(l, x, y) {
    const isColony = l.colony;
    const w = 14 + 15 * Math.max(1, (l.fields || []).length);  // as in player()
    const title = isColony ? S.cap(l.colony_tile && l.colony_tile.colony) : (l.plantation && l.plantation.name) || "plantation";
    const out = [S.rect(x, y, w, 30, {rx: 4, fill: isColony ? "#f0e1b4" : "#d9e8c2", stroke: isColony ? "#a8862c" : "#6c9a3c", stroke_width: 1.5})];
    (l.fields || []).forEach((f, k) => {
      const has = f.spice && f.spice !== "SPICE_UNSPECIFIED";
      out.push(S.circle(x + 14 + k * 15, y + 15, 6, {fill: has ? SPICE[f.spice] : "#fff", stroke: "#333", stroke_width: 0.7}));
    });
    out.push(S.title(`${title}: ${(l.fields || []).map((f) => (f.spice && f.spice !== "SPICE_UNSPECIFIED" ? S.cap(f.spice) : "empty")).join(", ")}`));
    return S.g(out.join(""), {class: isColony ? "colony" : "plantation"});
  }

  function player(v, p, meta, x, y, w, h, final, ctx) {
    const seat = p.seat || 0;
    const out = [S.rect(x, y, w, h, {rx: 8, fill: "#fffaf0", stroke: S.seatColor(seat), stroke_width: seat === v.current_seat ? 4 : 2})];
    const fs = (final || []).find((f) => (f.seat || 0) === seat);
    const mine = S.sees(v, seat);
    out.push(S.g(S.rect(x, y, w, 24, {rx: 8, fill: S.seatColor(seat)}) +
      S.text(x + 10, y + 17, `${S.name(meta, seat)}${v.first_player === seat ? " ⚑" : ""}`, {font_size: 14, fill: "#fff", font_weight: "bold"}) +
      // the ducats: where the quick starter takes its ducats (the play page)
      S.g(S.rect(x + w - 130, y + 2, 124, 20, {fill: "#fff", opacity: 0.01}) +
        S.text(x + w - 10, y + 17, fs ? `${fs.total} VP · ${fs.ducats} ducats` : mine ? `ducats ${v.my_ducats || 0}` : "ducats ?", {font_size: 13, fill: "#fff", text_anchor: "end", class: "ducats"}), {data_hit: `ducats:${seat}`}), {class: "player-head"}));
    out.push(progressBoard(v, p, x + 6, y + 30, ctx));
    if (mine && !fs) {
      // the seat's own "end of turn" marker beside its Development board (the play page)
      const ex = x + w - 32, ey = y + 46;
      out.push(S.g(S.rect(ex, ey, 26, 120, {rx: 13, fill: "#6a4a2a", stroke: "#3b2a1a", stroke_width: 1.5}) +
        S.text(ex + 13, ey + 60, "End turn", {font_size: 12, fill: "#fff", font_weight: "bold", text_anchor: "middle", dominant_baseline: "middle", transform: `rotate(-90 ${ex + 13} ${ey + 60})`}) +
        S.title("end of turn"), {class: "marker-button", data_hit: `end:${seat}`}));
    }
    const old = prevPlayer(ctx, seat);
    const ly = y + 30 + 16 + 5 * 24 + 6;
    // ships, colonists, Expedition cards, Extra action cards: each its own place (the play page
    // takes a ship or a colonist there, plays or passes an extra action on the cards)
    const sup = [[`${p.ships} ships`, `ships:${seat}`, 56], [`${p.colonists} colonists`, `colonists:${seat}`, 76],
      [`${p.hand_size} exp. cards`, null, 88], [`${p.extra_action_cards} extra act.`, `extra:${seat}`, 80]];
    let sx = x + 6;
    out.push(S.g(sup.map(([label, hit, sw]) => {
      const part = S.rect(sx, ly - 9, sw - 4, 17, {fill: "#fff", opacity: 0.01}) + S.text(sx + 4, ly + 4, label, {font_size: 11.5});
      sx += sw;
      return hit ? S.g(part, {data_hit: hit}) : part;
    }).join(""), {class: "supplies"}));
    const stats = (q) => [q.ships, q.colonists, q.hand_size, q.extra_action_cards].join();
    if (old && stats(old) !== stats(p)) out.push(S.mark(x + 6, ly - 9, w - 12, 17, ctx, "ships, colonists or cards changed"));
    let lx = x + 10, lyy = ly + 12;
    const lands = [], landMarks = [];
    (p.lands || []).forEach((l, k) => {
      const lw = 14 + 15 * Math.max(1, (l.fields || []).length);
      if (lx + lw > x + w - 8) { lx = x + 10; lyy += 36; }
      lands.push(land(l, lx, lyy));
      if (old && S.differs((old.lands || [])[k], l)) landMarks.push(S.mark(lx, lyy, lw, 30, ctx, "spices or land changed"));
      lx += lw + 6;
    });
    // the lands as one place: where spices are placed, paid, sold (the play page)
    out.push(S.g(S.rect(x + 6, ly + 10, w - 12, lyy - ly + 34, {fill: "#fff", opacity: 0.01}) + lands.join(""), {class: "lands", data_hit: `lands:${seat}`}) + landMarks.join(""));
    const ty = lyy + 48;
    const tiles = (p.tiles || []).map((t) => t.name + (t.vp ? ` (${t.vp})` : "")).join(", ");
    const tileLines = wrap(`Tiles: ${tiles || "none"}`, Math.floor(w / 6.2)).slice(0, 2);
    out.push(S.g(S.rect(x + 6, ty - 11, w - 12, 16 + tileLines.length * 13, {fill: "#fff", opacity: 0.01}) +
      S.text(x + 10, ty, `Colonies: ${(p.colonies || []).map(S.cap).join(", ") || "none"}`, {font_size: 11}) +
      tileLines.map((ln, i) => S.text(x + 10, ty + 15 + i * 13, ln, {font_size: 11})).join(""), {class: "tiles", data_hit: `tiles:${seat}`}));
    if (old && (S.differs(old.tiles, p.tiles) || S.differs(old.colonies, p.colonies))) out.push(S.mark(x + 6, ty - 11, w - 12, 44, ctx, "new tile or colony"));
    if (mine && !fs) {
      const hand = (v.my_hand || []).map(cardText).join(", ");
      const hl = wrap(`Hand: ${hand || "no Expedition card"}`, Math.floor(w / 6.2)).slice(0, 2);
      out.push(S.g(S.rect(x + 6, ty + 6 + tileLines.length * 13, w - 12, hl.length * 13 + 4, {fill: "#fff", opacity: 0.01}) +
        hl.map((ln, i) => S.text(x + 10, ty + 17 + (tileLines.length + i) * 13, ln, {font_size: 11, fill: "#1d4f9a", class: "my-hand"})).join(""), {class: "hand", data_hit: `hand:${seat}`}));
    }
    return out.join("");
  }

  window.RefereeBoards.goa = function (v, meta, ctx) {
    const W = 1200;
    const out = [];
    out.push(auctionBoard(v, meta, 16, 30, ctx));
    const a = v.auction;
    Object.keys(SPICE).forEach((sp, i) => out.push(S.circle(26 + i * 96, 546, 6.5, {fill: SPICE[sp], stroke: "#222", stroke_width: 0.6}) +
      S.text(36 + i * 96, 550, S.cap(sp), {font_size: 12})));
    let y = 572;
    const line = (s, extra, hit) => {
      const t = S.text(20, y, s, Object.assign({font_size: 13}, extra || {}));
      out.push(hit ? S.g(S.rect(16, y - 14, 500, 19, {fill: "#fff", opacity: 0.01}) + t, {data_hit: hit}) : t);
      y += 18;
    };
    line(`${S.cap(v.phase)} · flag holder ${S.name(meta, v.first_player || 0)}${v.current_seat >= 0 ? " · to act: " + S.name(meta, v.current_seat) : ""}`, {id: "status", font_weight: "bold"});
    if (v.decision_kind) line(`decision: ${v.decision_kind.replace("goa.", "").replace(/_/g, " ")}`);
    const pa = (S.prev(ctx) || {}).auction;
    if (a && pa && S.differs(pa, a)) out.push(S.mark(16, y - 14, 480, 19, ctx, "bid or pass"));
    if (a) line(`Auction of lot ${a.lot}${a.is_flag ? " (the flag)" : a.tile ? ": " + a.tile.name : ""} · high bid ${a.high_bid}${a.high_bidder >= 0 ? " by " + S.name(meta, a.high_bidder) : ""}`);
    line(`Expedition deck ${v.expedition_deck_size} · discards ${(v.expedition_discard || []).length} · B tiles left ${v.b_tiles_left}`, null, "deck");
    line(`Extra action cards in supply ${v.extra_action_supply}`);
    const need = v.colony_need || [];
    line(`Colonists needed: ${["Quilon", "Cochin", "Madras", "Calicut"].map((c, i) => `${c} ${need[i]}`).join(" · ")}`, null, "colonies");
    line(`Colony tiles left ${(v.colony_supply || []).length} · tiles in the box ${v.box_count || (v.box || []).length}`, null, "colony-tiles");
    line(`Colony VP ${(v.colony_vp || []).join("/")} · symbol sets ${(v.expedition_set_vp || []).join("/")} · edition ${v.edition}`, {fill: "#6a5a45", font_size: 11.5});
    // players 2x2 on the right
    const ps = v.players || [];
    const pw = 318, ph = 320;
    ps.forEach((p, i) => out.push(player(v, p, meta, 540 + (i % 2) * (pw + 10), 10 + Math.floor(i / 2) * (ph + 10), pw, ph, v.final_scores, ctx)));
    const H = Math.max(y + 10, 10 + Math.ceil(ps.length / 2) * (ph + 10));
    return S.svg(W, H, out.join(""), "Goa board");
  };

  // ---- the play page (play.js): where each legal move happens on this board. An action and
  // progress share their column of the Development board; where one place holds several
  // moves (the spices of a land, the bids on the lot) the page's chooser lists them.
  const P = window.RefereePlay = window.RefereePlay || {hits: {}, confirm: {}};
  const cell = (c) => `${(c && c.row) || 0},${(c && c.col) || 0}`;
  const ACTION_COLUMN = {build_ships: "SHIPS", harvest: "HARVEST", taxes: "TAXES", expedition: "EXPEDITION", found_colony: "COLONISTS"};
  P.hits.goa = function (kind, f, v, seat) {
    switch (kind) {
      case "place_token": case "swap_take": return `cell:${cell(f.cell)}`;
      case "place_flag": {  // an edge space, or (fewer players) a square left out of the board
        const r = (f.cell && f.cell.row) || 0, c = (f.cell && f.cell.col) || 0;
        return r >= 0 && r < 5 && c >= 0 && c < 5 ? `cell:${r},${c}` : `edge:${r},${c}`;
      }
      case "bid": case "pass": case "keep_lot": return "auction";
      case "progress": case "choose_column": return `col:${seat}:${f.column}`;
      case "quick_advance": return `col:${seat}:${f.first}`;
      case "build_ships": case "harvest": case "taxes": case "expedition": case "found_colony":
        return `col:${seat}:${ACTION_COLUMN[kind]}`;
      case "pay_spice": case "place_spice": case "sell_spice": case "done": case "discard_plantation":
        return `lands:${seat}`;
      case "take_ship": return `ships:${seat}`;
      case "take_colonist": return `colonists:${seat}`;
      case "choose_resource":  // Ships/Colonists tile, Resupply
        return f.kind === "RESOURCE_SHIPS" ? `ships:${seat}` : f.kind === "RESOURCE_COLONISTS" ? `colonists:${seat}` : `lands:${seat}`;
      case "play_extra_action": case "pass_extra_action": return `extra:${seat}`;
      case "use_tile": case "espionage": case "take_favor": return `tiles:${seat}`;
      case "play_card": case "discard_card": return `hand:${seat}`;
      case "draw": return "deck";
      case "reveal_more": case "recruit": case "decline": return "colonies";
      case "choose_colony_tile": return "colony-tiles";
      case "end_turn": return `end:${seat}`;
      case "quick_ducats": return `ducats:${seat}`;
      default: return null;
    }
  };
  // out of the auction for good, the turn's end, a card or tile given up
  P.confirm.goa = new Set(["pass", "end_turn", "pass_extra_action", "discard_card", "discard_plantation", "decline"]);
})();
