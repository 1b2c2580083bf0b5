// Batavia board: the route of 35 stalls with its tiles (face up / face down / taken) and the
// merchants, the seven counting houses with their crates, the cannon (pirate) track, and each
// player's company cards, seals, tiles, gold and bills. A seat's view (a replay from that seat)
// also shows that seat's hand; what the last move changed has an outline in the mover's colour.
(function () {
  "use strict";
  const S = window.RefereeSVG;
  const COMPANIES = ["ENGLAND", "DENMARK", "FRANCE", "NETHERLANDS", "SWEDEN"];
  const CO = {
    ENGLAND: ["#b3261e", "EN"], DENMARK: ["#c9a227", "DK"], FRANCE: ["#1d4f9a", "FR"],
    NETHERLANDS: ["#e0701b", "NL"], SWEDEN: ["#2b7a5a", "SE"],
  };
  const GOODS = {TEA: "#5b8c3a", COTTON: "#d9d4c7", PORCELAIN: "#6fa8dc", SILK: "#b565a7",
    GINGER: "#d8a24a", NUTMEG: "#8b5a2b", PEPPER: "#3a3a3a"};
  const coColor = (c) => (CO[c] || ["#777"])[0];
  const coAbbr = (c) => (CO[c] || ["", "?"])[1];

  function tile(x, y, w, h, company, good, label) {
    return S.rect(x, y, w, h, {rx: 5, fill: "#fbf3dc", stroke: coColor(company), stroke_width: 3}) +
      S.rect(x, y, w, 15, {rx: 4, fill: coColor(company)}) +
      S.text(x + w / 2, y + 12, coAbbr(company), {text_anchor: "middle", font_size: 11, fill: "#fff", font_weight: "bold"}) +
      S.circle(x + 11, y + h / 2 + 8, 6, {fill: GOODS[good] || "#999", stroke: "#333", stroke_width: 0.6}) +
      S.text(x + 20, y + h / 2 + 12, label || S.cap(good), {font_size: 11.5, fill: "#222"});
  }

  const prevPlayer = (ctx, seat) => ((S.prev(ctx) || {}).players || []).find((q) => (q.seat || 0) === seat);

  function route(v, meta, ctx) {
    // 35 spaces, 7 per row, snaking (left to right, then right to left) like a trail
    const out = [];
    const W = 92, H = 58, X0 = 20, Y0 = 46, GX = 12, GY = 22;
    const pos = (i) => {
      const row = Math.floor(i / 7), k = i % 7;
      const col = row % 2 === 0 ? k : 6 - k;
      return [X0 + col * (W + GX), Y0 + row * (H + GY)];
    };
    let path = "";
    for (let i = 0; i < 35; i++) {
      const [x, y] = pos(i);
      path += `${i ? "L" : "M"}${x + W / 2},${y + H / 2} `;
    }
    out.push(`<path d="${path}" fill="none" stroke="#b39b6b" stroke-width="10" stroke-linejoin="round" opacity="0.55"/>`);
    out.push(S.text(X0, Y0 - 14, "The route: 35 stalls", {font_size: 15, font_weight: "bold", fill: "#4a3520"}));
    const stalls = v.stalls || [];
    const before = (S.prev(ctx) || {}).stalls;
    const marks = [];
    for (let i = 0; i < 35; i++) {
      const st = stalls[i] || {state: "TAKEN"};
      const [x, y] = pos(i);
      if (before && before[i] && S.differs(before[i], st)) marks.push(S.mark(x, y, W, H, ctx, st.state === "TAKEN" ? `stall ${i + 1} taken` : `stall ${i + 1} turned up`));
      out.push(S.text(x + 2, y - 3, String(i + 1), {font_size: 11, fill: "#7a6a55"}));
      if (st.state === "FACE_UP") out.push(S.g(tile(x, y, W, H, st.company, st.good) + S.title(`stall ${i + 1}: ${S.cap(st.company)} ${S.cap(st.good)}`), {class: "stall face-up", data_hit: `stall:${i + 1}`}));
      else if (st.state === "FACE_DOWN") {
        out.push(S.g(S.rect(x, y, W, H, {rx: 5, fill: "#5a4630", stroke: "#3b2a1a", stroke_width: 2}) +
          S.text(x + W / 2, y + H / 2 + 6, "?", {text_anchor: "middle", font_size: 22, fill: "#e8d9b5"}) + S.title(`stall ${i + 1}: face down`), {class: "stall face-down", data_hit: `stall:${i + 1}`}));
      } else {
        out.push(S.rect(x, y, W, H, {rx: 5, fill: "none", stroke: "#b9a77f", stroke_dasharray: "4 3"}));
      }
    }
    // merchants
    const here = {};
    for (const p of v.players || []) {
      const sp = p.merchant_space || 0;
      (here[sp] = here[sp] || []).push(p.seat);
    }
    for (const [sp, seats] of Object.entries(here)) {
      const s = Number(sp);
      let x, y;
      if (s <= 0) { x = X0 - 12; y = Y0 + 10; } else { [x, y] = pos(Math.min(34, s - 1)); x += W - 14; y += 22; }
      seats.forEach((seat, j) => {
        const cx = x - j * 13, cy = y;
        const old = prevPlayer(ctx, seat);
        if (old && (old.merchant_space || 0) !== s) marks.push(S.mark(cx - 8, cy - 14, 16, 29, ctx, `${S.name(meta, seat)}'s merchant moved to stall ${s}`));
        out.push(S.g(`<path d="M${cx - 7},${cy + 14} L${cx},${cy - 6} L${cx + 7},${cy + 14} Z" fill="${S.seatColor(seat)}" stroke="#111" stroke-width="1"/>` +
          S.circle(cx, cy - 8, 5, {fill: S.seatColor(seat), stroke: "#111"}) + S.title(`${S.name(meta, seat)}'s merchant on space ${s}`), {class: "merchant", data_hit: `merchant:${seat}`}));
      });
    }
    return out.join("") + marks.join("");
  }

  function countingHouses(v, x0, y0, ctx) {
    const out = [S.text(x0, y0 - 14, "Counting houses", {font_size: 15, font_weight: "bold", fill: "#4a3520"})];
    const cw = 30, rh = 28;
    COMPANIES.forEach((c, j) => out.push(S.rect(x0 + 80 + j * cw, y0, cw - 4, 16, {fill: coColor(c), rx: 3}) +
      S.text(x0 + 80 + j * cw + 13, y0 + 12, coAbbr(c), {text_anchor: "middle", font_size: 11, fill: "#fff"})));
    const before = (S.prev(ctx) || {}).counting_houses || [];
    (v.counting_houses || []).forEach((h, i) => {
      const y = y0 + 22 + i * rh;
      const old = (before[i] || {}).crate_owner || [];
      out.push(S.rect(x0, y, 76 + 5 * cw, rh - 4, {fill: "#efe3c4", rx: 4}));
      out.push(S.circle(x0 + 10, y + 12, 6, {fill: GOODS[h.good] || "#999", stroke: "#333", stroke_width: 0.6}));
      out.push(S.text(x0 + 20, y + 16, S.cap(h.good), {font_size: 12}));
      (h.crate_owner || []).forEach((o, j) => {
        const x = x0 + 80 + j * cw;
        out.push(o >= 0 ? S.rect(x + 2, y + 2, 20, 18, {fill: S.seatColor(o), stroke: "#222", rx: 2}) +
          `<path d="M${x + 2},${y + 8} h20 M${x + 12},${y + 2} v18" stroke="#0005"/>`
          : S.rect(x + 2, y + 2, 20, 18, {fill: "none", stroke: "#b9a77f", stroke_dasharray: "3 2", rx: 2}));
        if (before.length && old[j] !== o && o >= 0) out.push(S.mark(x + 2, y + 2, 20, 18, ctx, `crate placed in the ${S.cap(h.good)} counting house`));
      });
    });
    return out.join("");
  }

  function cannon(v, x0, y0, w, ctx) {
    const n = 26, cw = w / n;
    const out = [S.text(x0, y0 - 8, `Cannon track: ${v.cannon} face-up cards in play (pirates at ${v.pirate_threshold})`, {font_size: 14, font_weight: "bold", fill: "#4a3520"})];
    for (let i = 0; i < n; i++) {
      const hot = i >= (v.pirate_threshold || 25);
      out.push(S.rect(x0 + i * cw, y0, cw - 2, 24, {fill: i === v.cannon ? "#2b2118" : hot ? "#c9472d" : i % 5 === 0 ? "#d9c9a0" : "#ece0c0", rx: 2}));
      out.push(S.text(x0 + i * cw + cw / 2 - 1, y0 + 16, String(i), {text_anchor: "middle", font_size: 11, fill: i === v.cannon ? "#fff" : "#5a4a35"}));
    }
    const pv = S.prev(ctx);
    if (pv && pv.cannon !== v.cannon) out.push(S.mark(x0 + Math.min(n - 1, v.cannon) * cw, y0, cw - 2, 24, ctx, `cannon moved to ${v.cannon}`));
    return out.join("");
  }

  function player(v, p, meta, x, y, w, ctx) {
    const seat = p.seat || 0;
    const h = 150;
    const out = [S.rect(x, y, w, h, {rx: 8, fill: "#fffaf0", stroke: S.seatColor(seat), stroke_width: seat === v.current_seat ? 4 : 2})];
    out.push(S.rect(x, y, w, 24, {rx: 8, fill: S.seatColor(seat)}));
    const first = v.first_player === seat ? " ⚑ first player" : "";
    out.push(S.text(x + 10, y + 17, `${S.name(meta, seat)}${first}`, {font_size: 14, fill: "#fff", font_weight: "bold"}));
    out.push(S.text(x + w - 10, y + 17, `gold ${p.gold}`, {font_size: 14, fill: "#fff", font_weight: "bold", text_anchor: "end", class: "gold"}));
    const old = prevPlayer(ctx, seat);
    const mine = S.sees(v, seat);
    const hand = mine ? `hand ${p.hand_size}: ${((v.my_hand && v.my_hand.count) || []).map((n, j) => (n ? `${n} ${coAbbr(COMPANIES[j])}` : "")).filter(Boolean).join(", ") || "empty"}` : `hand ${p.hand_size}`;
    if (old && (old.gold !== p.gold)) out.push(S.mark(x + w - 90, y + 2, 84, 20, ctx, "gold"));
    if (old && (old.hand_size !== p.hand_size || old.bills !== p.bills || old.in_auction !== p.in_auction)) out.push(S.mark(x + 6, y + 29, w - 12, 18, ctx, "hand or bills"));
    out.push(S.text(x + 10, y + 42, `${hand} · bills ${p.bills} · crates ${p.crates_left}${p.has_arrival_tile ? " · ⚓ arrival tile" : ""}${p.in_auction ? " · bidding" : ""}`, {font_size: 12}));
    // company cards laid face up, with seals
    const counts = (p.face_up && p.face_up.count) || [];
    const seals = new Set(p.seals || []);
    COMPANIES.forEach((c, j) => {
      const cx = x + 10 + j * ((w - 20) / 5);
      const n = counts[j] || 0;
      // data-hit: where the play page lays a card of this company (play.js)
      out.push(S.g(S.rect(cx, y + 52, 38, 50, {rx: 4, fill: n ? coColor(c) : "#eee", stroke: coColor(c), stroke_width: 2, opacity: n ? 1 : 0.6}) +
        S.text(cx + 19, y + 70, coAbbr(c), {text_anchor: "middle", font_size: 11, fill: n ? "#fff" : coColor(c)}) +
        S.text(cx + 19, y + 94, String(n), {text_anchor: "middle", font_size: 18, font_weight: "bold", fill: n ? "#fff" : "#999"}) +
        S.title(`${S.cap(c)} ship cards laid: ${n}`), {class: "company", data_hit: `card:${seat}:${c}`}));
      if (old && ((old.face_up && old.face_up.count) || [])[j] !== counts[j]) out.push(S.mark(cx, y + 52, 38, 50, ctx, `${S.cap(c)} ship cards`));
      if (seals.has(c)) {
        out.push(S.g(S.circle(cx + 50, y + 64, 11, {fill: "#a3161a", stroke: "#5c0a0c", stroke_width: 2}) +
          S.text(cx + 50, y + 68, coAbbr(c), {text_anchor: "middle", font_size: 10, fill: "#fff", font_weight: "bold"}) + S.title(`${S.cap(c)} seal`), {class: "seal"}));
      }
    });
    // stall tiles kept (the area is where the play page offers the exchange)
    out.push(S.g(S.rect(x + 6, y + 108, w - 12, 38, {rx: 4, fill: "#fffaf0", opacity: 0.01}) + S.title("stall tiles kept"), {class: "tiles", data_hit: `tiles:${seat}`}));
    (p.tiles || []).slice(0, 12).forEach((t, k) => {
      const tx = x + 10 + k * 34;
      out.push(S.g(S.rect(tx, y + 112, 30, 30, {rx: 3, fill: "#fbf3dc", stroke: coColor(t.company), stroke_width: 3}) +
        S.text(tx + 15, y + 123, coAbbr(t.company), {text_anchor: "middle", font_size: 10, fill: coColor(t.company), font_weight: "bold"}) +
        S.circle(tx + 15, y + 133, 5, {fill: GOODS[t.good] || "#999"}) + S.title(`${S.cap(t.company)} ${S.cap(t.good)}`)));
    });
    if (!(p.tiles || []).length) out.push(S.text(x + 10, y + 132, "no stall tile kept", {font_size: 11, fill: "#998"}));
    if (old && S.differs(old.tiles, p.tiles)) out.push(S.mark(x + 8, y + 110, Math.max(120, Math.min(12, (p.tiles || []).length) * 34), 34, ctx, "stall tiles"));
    return out.join("");
  }

  window.RefereeBoards.batavia = function (v, meta, ctx) {
    const W = 1180;
    const out = [S.rect(0, 0, W, 1, {fill: "none"})];
    out.push(route(v, meta, ctx));
    out.push(countingHouses(v, 780, 46, ctx));
    out.push(cannon(v, 20, 470, 740, ctx));
    // status
    const a = v.auction || {};
    let status = `Round ${v.round} · ${S.cap(v.phase)}${v.final_round ? " · final round" : ""} · draw pile ${v.draw_pile_size}`;
    if (v.phase === "AUCTION" && a.lot) {
      const lot = (a.lot.count || []).map((n, j) => (n ? `${n} ${coAbbr(COMPANIES[j])}` : "")).filter(Boolean).join(", ");
      status += ` · auction (die ${a.die}): ${lot || "no card"}, high bid ${a.high_bid}${a.high_bidder >= 0 ? " by " + S.name(meta, a.high_bidder) : ""}`;
    }
    if (v.pending_tile && v.pending_tile.company && v.pending_tile.company !== "COMPANY_UNSPECIFIED") status += ` · taken: ${S.cap(v.pending_tile.company)} ${S.cap(v.pending_tile.good)}`;
    out.push(S.g(S.rect(16, 514, 1148, 22, {rx: 4, fill: "#fffaf0", opacity: 0.01}) + S.text(20, 530, status, {font_size: 14, fill: "#2b2118", id: "status"}), {class: "auction", data_hit: "auction"}));
    const pa = (S.prev(ctx) || {}).auction;
    if (v.phase === "AUCTION" && pa && S.differs(pa, a)) out.push(S.mark(16, 514, 1148, 22, ctx, "bid or pass"));
    const disc = ((v.discards && v.discards.count) || []).map((n, j) => `${coAbbr(COMPANIES[j])} ${n}`).join(" · ");
    out.push(S.text(20, 550, `Sunk by pirates: ${disc}`, {font_size: 12, fill: "#6a5a45"}));
    out.push(S.text(780, 280, v.arrival_holder >= 0 ? `Arrival tile: ${S.name(meta, v.arrival_holder)}` : "Arrival tile: on the board", {font_size: 13}));
    // the draw pile and the arrival tile as places (the play page draws 2 cards, takes the tile)
    out.push(S.g(S.rect(780, 300, 170, 64, {rx: 6, fill: "#5a4630", stroke: "#3b2a1a", stroke_width: 2}) +
      S.text(865, 327, "Draw pile", {text_anchor: "middle", font_size: 14, fill: "#f6e7c8", font_weight: "bold"}) +
      S.text(865, 348, `${v.draw_pile_size} ship cards`, {text_anchor: "middle", font_size: 12, fill: "#f6e7c8"}) + S.title("the draw pile"), {class: "draw-pile", data_hit: "draw"}));
    out.push(S.g(S.rect(970, 300, 190, 64, {rx: 6, fill: v.arrival_holder >= 0 ? "#eee" : "#fbf3dc", stroke: "#4a3520", stroke_width: 2, stroke_dasharray: v.arrival_holder >= 0 ? "4 3" : undefined}) +
      S.text(1065, 327, "⚓ Arrival tile", {text_anchor: "middle", font_size: 14, fill: "#4a3520", font_weight: "bold"}) +
      S.text(1065, 348, v.arrival_holder >= 0 ? S.name(meta, v.arrival_holder) : "after stall 35", {text_anchor: "middle", font_size: 12, fill: "#4a3520"}) + S.title("the arrival tile"), {class: "arrival", data_hit: "arrival"}));
    // players, two or three per row
    const ps = v.players || [];
    const per = ps.length > 4 ? 3 : 2;
    const pw = (W - 40 - (per - 1) * 14) / per;
    ps.forEach((p, i) => out.push(player(v, p, meta, 20 + (i % per) * (pw + 14), 570 + Math.floor(i / per) * 162, pw, ctx)));
    const H = 570 + Math.ceil(ps.length / per) * 162 + 4;
    return S.svg(W, H, out.join(""), "Batavia board");
  };

  // ---- the play page (play.js): where each legal move happens on this board
  const P = window.RefereePlay = window.RefereePlay || {hits: {}, confirm: {}};
  P.hits.batavia = function (kind, f, v, seat) {
    switch (kind) {
      case "bid": case "pass_bid": return "auction";
      case "draw_cards": return "draw";
      case "play_card": return `card:${seat}:${f.company}`;
      case "advance_merchant": {
        // the stall the merchant moves to: the next face-up tile of that company ahead
        const me = (v.players || []).find((p) => (p.seat || 0) === seat) || {};
        const stalls = v.stalls || [];
        for (let i = me.merchant_space || 0; i < stalls.length; i++) {
          if (stalls[i].state === "FACE_UP" && stalls[i].company === f.company) return `stall:${i + 1}`;
        }
        return `merchant:${seat}`;
      }
      case "take_arrival": return "arrival";
      case "exchange_tiles": case "keep_tiles": return `tiles:${seat}`;
      default: return null;
    }
  };
  // dropping out of an auction, ending the turn, the exchange, the arrival (ends the game)
  P.confirm.batavia = new Set(["pass_bid", "draw_cards", "take_arrival", "exchange_tiles", "keep_tiles"]);
})();
