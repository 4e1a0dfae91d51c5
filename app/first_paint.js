// The page's first panel before Dash's scripts (app/delivery.py `first_paint`, inlined in
// the page after the panel's placeholder). The HTML holds the panel's figure
// (#tempsup-first-figure) and, inert inside a <template>, the scripts Dash put in the page.
// plotly.js comes first, with the whole of a slow network for itself; as soon as it has
// run, Dash's scripts are asked for (in their order, which they keep: async = false), with
// the layout and callbacks they will fetch (preloads), and the panel is drawn while they
// download, in the colours and arrangement the screen asks (tempsup/figures/view.js).
// Dash's renderer, the last of them, replaces the placeholder with the page.
(function () {
  "use strict";
  var first = document.getElementById("tempsup-first-plotly");
  var deferred = document.getElementById("tempsup-deferred");
  var started = false;

  function preload(href) {
    var link = document.createElement("link");
    link.rel = "preload";
    link.as = "fetch";
    link.crossOrigin = "anonymous";
    link.href = href;
    document.head.appendChild(link);
  }

  // Dash's scripts, as the page held them (an inline one runs in its turn too: from a blob)
  function rest(withPlotly) {
    if (started) return;
    started = true;
    JSON.parse(deferred.getAttribute("data-preload") || "[]").forEach(preload);
    var plotly = first.getAttribute("src");
    deferred.content.querySelectorAll("script").forEach(function (old) {
      var src = old.getAttribute("src");
      if (src === plotly && !withPlotly) return;
      var script = document.createElement("script");
      if (old.id) script.id = old.id;
      if (old.type) script.type = old.type;
      script.src = src || URL.createObjectURL(new Blob([old.textContent], { type: "text/javascript" }));
      script.async = false;
      document.body.appendChild(script);
    });
  }

  function draw() {
    var gd = document.getElementById("tempsup-first-panel");
    var source = document.getElementById("tempsup-first-figure");
    if (!gd || !source || !window.Plotly) return;
    var fig = JSON.parse(source.textContent);
    if (window.tempsupView) fig = window.tempsupView.view(fig);
    // no toolbar: it would sit over the title on a phone, and Dash's panel, with its toolbar,
    // takes this one's place within seconds
    window.Plotly.newPlot(gd, fig.data, fig.layout, { displayModeBar: false, responsive: true });
  }

  function arrived() {
    rest(false);
    try {
      draw();
    } catch (err) {
      if (window.console) window.console.error(err);
    }
  }

  if (window.Plotly) arrived();
  else {
    first.addEventListener("load", arrived);
    first.addEventListener("error", function () { rest(true); });
  }
})();
