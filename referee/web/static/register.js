// Registration: posts the form as JSON and shows the bot token once, with a copy button.
(function () {
  "use strict";
  const form = document.getElementById("register-form");
  if (!form) return;
  const err = document.getElementById("register-error");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    err.textContent = "";
    const body = {
      name: form.elements.name.value.trim(), owner: form.elements.owner.value.trim(),
      kind: form.querySelector("input[name=kind]:checked").value,
      description: form.elements.description.value.trim(),
      invite_code: form.elements.invite_code ? form.elements.invite_code.value.trim() : "",
    };
    fetch("/api/leagues/" + encodeURIComponent(form.dataset.league) + "/register", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      cache: "no-store",
    }).then((r) => r.json().then((d) => [r.ok, d])).then(([ok, d]) => {
      if (!ok) { err.textContent = "Refused (" + (d.reason || d.status) + "): " + d.error; return; }
      form.hidden = true;
      const box = document.getElementById("token-box");
      document.getElementById("bot-token").textContent = d.bot_token;
      const link = document.createElement("a");
      link.href = "/bots/" + encodeURIComponent(d.name);
      link.textContent = "your bot's page";
      const next = document.getElementById("next-step");
      next.append(body.kind === "hosted" ? "Upload its first version on " : "Connect it with a session (see the docs), then follow it on ", link, ".");
      box.hidden = false;
    }).catch(() => { err.textContent = "The referee did not answer."; });
  });
  const copy = document.getElementById("copy-token");
  if (copy) copy.addEventListener("click", () => {
    const text = document.getElementById("bot-token").textContent;
    const done = (msg) => { document.getElementById("copied").textContent = msg; };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => done("copied"), () => done("select it and copy"));
    else done("select it and copy");
  });
})();
