// The match list: local times, sortable columns, and a refresh while matches are live.
(function () {
  "use strict";
  function fmt() {
    for (const td of document.querySelectorAll("td.time")) {
      const ms = Number(td.dataset.ms);
      if (ms) td.textContent = new Date(ms).toISOString().replace("T", " ").slice(0, 19);
    }
  }
  function sortable(table) {
    table.querySelectorAll("th").forEach((th, col) => {
      th.onclick = () => {
        const body = table.tBodies[0];
        const asc = th.dataset.dir !== "asc";
        table.querySelectorAll("th").forEach((h) => delete h.dataset.dir);
        th.dataset.dir = asc ? "asc" : "desc";
        const key = (tr) => { const td = tr.children[col]; const v = td ? (td.dataset.sort || td.textContent.trim()) : ""; const n = Number(v); return v !== "" && !isNaN(n) ? n : v.toLowerCase(); };
        const rows = Array.from(body.rows).filter((r) => !r.classList.contains("empty"));
        rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
        rows.forEach((r) => body.appendChild(r));
      };
    });
  }
  window.RefereeSortable = sortable;
  fmt();
  const table = document.getElementById("matches");
  if (table) sortable(table);
  // filters and pages: links built here (the page's policy allows no form submission)
  const form = document.getElementById("filters");
  function go() {
    const q = new URLSearchParams();
    if (form) for (const el of form.querySelectorAll("input[name]")) if (el.value.trim()) q.set(el.name, el.value.trim());
    const s = q.toString();
    location.assign((form ? form.dataset.base : location.pathname) + (s ? "?" + s : ""));
  }
  if (form) form.addEventListener("submit", (ev) => { ev.preventDefault(); go(); });
  if (table && table.querySelector('tr[data-state="running"]')) {
    setTimeout(() => { if (!document.hidden) location.reload(); }, 3000);
  }
})();
