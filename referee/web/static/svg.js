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
  };
  window.RefereeSVG = S;
  window.RefereeBoards = window.RefereeBoards || {};
})();
