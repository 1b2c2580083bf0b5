// Small SVG-string helpers shared by the board renderers (no build step, no library).
(function () {
  "use strict";
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const attrs = (a) => Object.entries(a || {}).filter(([, v]) => v !== undefined && v !== null && v !== false)
    .map(([k, v]) => ` ${k.replace(/_/g, "-")}="${esc(v)}"`).join("");
  const S = {
    esc,
    SEAT_COLORS: ["#d1342f", "#2f6fd1", "#2e9e44", "#e8a21a", "#8b4fc9"],
    seatColor: (s) => (s >= 0 ? S.SEAT_COLORS[s % 5] : "#888"),
    el: (tag, a, inner) => `<${tag}${attrs(a)}>${inner === undefined ? "" : inner}</${tag}>`,
    rect: (x, y, w, h, a) => `<rect${attrs({x, y, width: w, height: h, ...a})}/>`,
    circle: (cx, cy, r, a) => `<circle${attrs({cx, cy, r, ...a})}/>`,
    line: (x1, y1, x2, y2, a) => `<line${attrs({x1, y1, x2, y2, ...a})}/>`,
    text: (x, y, s, a) => `<text${attrs({x, y, ...a})}>${esc(s)}</text>`,
    title: (s) => `<title>${esc(s)}</title>`,
    g: (inner, a) => `<g${attrs(a)}>${inner}</g>`,
    svg: (w, h, inner, label) =>
      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="100%" role="img" aria-label="${esc(label || "board")}" font-family="Georgia, 'DejaVu Serif', serif">${inner}</svg>`,
    cap: (s) => String(s || "").toLowerCase().replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase()),
    // a seat's name (from the page) or "seat N"
    name: (meta, s) => (meta && meta.names && meta.names[s]) || `seat ${s}`,
    // ---- the last move (ctx = {v, seat, events, prev, viewer_seat} from viewer.js; may be absent)
    // who made the frame's move: the frame's seat, else the first event's seat, else -1
    actor: (ctx) => {
      if (!ctx) return -1;
      if (ctx.seat !== undefined && ctx.seat >= 0) return ctx.seat;
      const e = (ctx.events || []).find((x) => x.seat !== undefined && x.seat >= 0);
      return e ? e.seat : -1;
    },
    // the previous frame's view when there is one to compare with
    prev: (ctx) => (ctx && ctx.prev) || null,
    // true when a and b differ (views share unchanged parts, so identical objects are equal)
    differs: (a, b) => a !== b && JSON.stringify(a) !== JSON.stringify(b),
    // an outline in the actor's colour around what the last move changed (class "last-move")
    mark: (x, y, w, h, ctx, what) => S.g(
      S.rect(x - 3, y - 3, w + 6, h + 6, {rx: 6, fill: "none", stroke: "#fff", stroke_width: 7, opacity: 0.9}) +
      S.rect(x - 3, y - 3, w + 6, h + 6, {rx: 6, fill: "none", stroke: S.seatColor(S.actor(ctx)), stroke_width: 4}) +
      (what ? S.title(`last move: ${what}`) : ""), {class: "last-move", "pointer-events": "none"}),
    // the auction lot: a thick dashed gold frame (class "auction-lot")
    lot: (x, y, w, h, what) => S.g(
      S.rect(x - 4, y - 4, w + 8, h + 8, {rx: 7, fill: "none", stroke: "#3b2a1a", stroke_width: 7}) +
      S.rect(x - 4, y - 4, w + 8, h + 8, {rx: 7, fill: "none", stroke: "#f2c230", stroke_width: 4, stroke_dasharray: "9 5"}) +
      S.title(what || "on auction"), {class: "auction-lot", "pointer-events": "none"}),
    // whether this view carries seat s's private information (a seat view, or the reveal)
    sees: (v, s) => v && v.seat !== undefined && v.seat >= 0 && v.seat === s,
    // a five-point star (points), drawn rather than typed: no font needed
    star: (cx, cy, r, a) => {
      const pts = [];
      for (let k = 0; k < 10; k++) {
        const rr = k % 2 ? r * 0.45 : r, t = Math.PI / 5 * k - Math.PI / 2;
        pts.push(`${(cx + rr * Math.cos(t)).toFixed(1)},${(cy + rr * Math.sin(t)).toFixed(1)}`);
      }
      return `<polygon points="${pts.join(" ")}"${attrs(Object.assign({fill: "#e0a21b", stroke: "#7a5200", stroke_width: 0.8}, a || {}))}/>`;
    },
    // a pennant flag (the first player), drawn rather than typed
    pennant: (x, y, color) => `<path d="M${x},${y + 12} V${y} L${x + 11},${y + 4} L${x},${y + 8}" fill="${color || "#fff"}" stroke="#222" stroke-width="1"/>`,
  };
  window.RefereeSVG = S;
  window.RefereeBoards = window.RefereeBoards || {};
})();
