/* plotly.js in two steps: the 2-D bundle beside this file (plotly-2d.min.js: plotly.js's
 * core with the scatter, bar and heatmap traces, a quarter of the full bundle's bytes,
 * built by scripts/plotly-bundle/build) draws every first panel; a figure with a trace it
 * lacks (scatter3d, mesh3d: a network with a 3-D hidden state) loads the full plotly.js
 * that Dash serves (window._dashPlotlyJSURL, from the plotly package) once, and that graph
 * draws with it.
 *
 * window.Plotly becomes a dispatcher: each graph is drawn by one bundle, the one that
 * first drew it (el._tempsupPlotly), until a figure needs the full one; then the 2-D
 * bundle lets the graph go (purge) and the full one draws it, keeping the listeners
 * that Dash and the app's scripts put on it. Nothing is downloaded while no 3-D figure
 * shows. Loaded after the bundle: Dash loads a folder's assets after the top-level ones,
 * each folder's files in name order. */
(function () {
  "use strict";
  const lite = window.Plotly;
  if (!lite || lite.tempsupDispatcher) return;
  const OWNER = "_tempsupPlotly";
  const NAMESPACES = new Set(["Plots", "Fx", "Snapshot", "PlotSchema", "Icons"]);
  let full = null;
  let loading = null;
  let liteTypes = null;

  function liteDraws(type) {
    if (!liteTypes) liteTypes = new Set(Object.keys(lite.PlotSchema.get().traces));
    return liteTypes.has(type || "scatter");
  }

  // The traces of a react/newPlot call: (gd, data, layout, config) or (gd, figure).
  function tracesOf(args) {
    const a = args[1];
    if (Array.isArray(a)) return a;
    if (!a || typeof a !== "object") return [];
    const out = (a.data || []).slice();
    (a.frames || []).forEach((f) => out.push(...((f && f.data) || [])));
    return out;
  }

  function needsFull(args) {
    return tracesOf(args).some((t) => t && !liteDraws(t.type));
  }

  function loadFull() {
    if (!loading) {
      loading = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src =
          window._dashPlotlyJSURL || "/_dash-component-suites/plotly/package_data/plotly.min.js";
        script.async = true;
        script.onload = () => {
          full = window.Plotly; // the bundle sets window.Plotly itself
          window.Plotly = dispatcher;
          resolve(full);
        };
        script.onerror = () => {
          loading = null;
          window.Plotly = dispatcher;
          reject(new Error("the full plotly.js did not load"));
        };
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function element(gd) {
    return typeof gd === "string" ? document.getElementById(gd) : gd;
  }

  function ownerOf(gd) {
    const el = element(gd);
    return (el && el[OWNER]) || full || lite;
  }

  // Listeners put on a graph with gd.on(…), as plotly.js's emitter keeps them.
  function listeners(el) {
    const events = (el && el._ev && el._ev._events) || {};
    const out = [];
    Object.keys(events).forEach((name) => {
      [].concat(events[name]).forEach((fn) => out.push([name, fn.listener || fn]));
    });
    return out;
  }

  // Draw (react/newPlot) with the bundle this figure needs, moving the graph over if needed.
  function draw(name, args) {
    const el = element(args[0]);
    if (!needsFull(args) || (el && el[OWNER] === full && full)) {
      const plotly = ownerOf(el);
      if (el) el[OWNER] = plotly;
      return plotly[name].apply(plotly, args);
    }
    return loadFull().then((plotly) => {
      const kept = el && el[OWNER] === lite ? listeners(el) : [];
      if (el && el[OWNER] === lite) lite.purge(el);
      if (el) el[OWNER] = plotly;
      const done = plotly[name].apply(plotly, args);
      kept.forEach(([event, fn]) => el.on(event, fn));
      return done;
    });
  }

  function forward(path, key) {
    return function (...args) {
      if (!path && (key === "react" || key === "newPlot")) return draw(key, args);
      const plotly = ownerOf(args[0]);
      const target = path ? plotly[path] : plotly;
      return target[key].apply(target, args);
    };
  }

  function namespace(path) {
    return new Proxy(
      {},
      {
        get(_, key) {
          const value = (full || lite)[path][key];
          return typeof value === "function" ? forward(path, key) : value;
        },
      },
    );
  }

  const dispatcher = new Proxy(
    {},
    {
      get(_, key) {
        if (key === "tempsupDispatcher") return true;
        const value = (full || lite)[key];
        if (NAMESPACES.has(key) && value && typeof value === "object") return namespace(key);
        return typeof value === "function" ? forward(null, key) : value;
      },
      has(_, key) {
        return key in (full || lite);
      },
    },
  );
  window.Plotly = dispatcher;
})();
