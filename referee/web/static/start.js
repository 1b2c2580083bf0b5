// Starts the viewer with the options the page carries as JSON (#viewer-opts): a file of its
// own, so the page's Content-Security-Policy needs no inline script.
window.RefereeViewer.start(JSON.parse(document.getElementById("viewer-opts").textContent));
