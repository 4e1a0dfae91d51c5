// Every Plotly figure of a tempsup page shown as the screen asks, on every surface: the
// app (app/__init__.py puts this script in its page head), the HTML export and the static
// site (tempsup/figures/view.py inlines it).
//
// - Narrow screen (max-width: 600px): a figure that carries a narrow arrangement
//   (layout.meta.tempsup.narrow, e.g. the animation's four panels one above the other,
//   tempsup/figures/animation.py) is drawn with it: a patch of attribute paths, as
//   Plotly.relayout takes them, for the layout and per trace (`wide`: the way back).
// - Dark system scheme: drawn with the dark colours of tempsup/core/palette.py (DARK, set as
//   window.tempsupDark before this script).
//
// The figure as its page drew it (the server, a callback, the export) is kept as the
// source of what is shown, so a change of either query (turning the phone, switching the
// system back to light) redraws it from that source: nothing is undone by hand.
(function () {
  "use strict";
  const media = (q) => (window.matchMedia ? window.matchMedia(q) : null);
  const darkQuery = media("(prefers-color-scheme: dark)");
  const narrowQuery = media("(max-width: 600px)");
  const isDark = () => !!(darkQuery && darkQuery.matches && window.tempsupDark);
  const isNarrow = () => !!(narrowQuery && narrowQuery.matches);
  const PLAIN = "light";

  // A copy of `value` with every colour of DARK.colors swapped (arrays of numbers are
  // data, kept as they are: they hold no colours).
  function swapColors(value, colors) {
    if (typeof value === "string") return Object.prototype.hasOwnProperty.call(colors, value)
      ? colors[value] : value;
    if (Array.isArray(value)) {
      return typeof value[0] === "number" ? value : value.map((v) => swapColors(v, colors));
    }
    if (value && typeof value === "object") {
      const out = {};
      Object.keys(value).forEach((k) => {
        if (k.charAt(0) !== "_") out[k] = swapColors(value[k], colors);
      });
      return out;
    }
    return value;
  }

  const merge = (a, b) => Object.assign({}, a || {}, b);

  // The figure `{data, layout}` in dark colours (the template's too, so any axis a figure
  // leaves to it follows).
  function darkFigure(fig) {
    const dark = window.tempsupDark;
    const layout = swapColors(fig.layout || {}, dark.colors);
    Object.keys(dark.layout).forEach((k) => {
      const v = dark.layout[k];
      layout[k] = typeof v === "object" ? merge(layout[k], v) : v;
    });
    Object.keys(layout).forEach((k) => {
      if (/^[xy]axis\d*$/.test(k)) layout[k] = merge(layout[k], dark.axis);
      if (/^legend\d+$/.test(k)) layout[k] = merge(layout[k], dark.layout.legend);
      if (/^scene\d*$/.test(k)) {
        ["xaxis", "yaxis", "zaxis"].forEach((a) => {
          layout[k][a] = merge(layout[k][a], dark.scene_axis);
        });
      }
    });
    ["xaxis", "yaxis"].forEach((a) => { layout[a] = merge(layout[a], dark.axis); });
    if (layout.template && layout.template.layout) {
      layout.template = merge(layout.template, {
        layout: merge(layout.template.layout, {
          paper_bgcolor: dark.layout.paper_bgcolor, plot_bgcolor: dark.layout.plot_bgcolor,
          font: merge(layout.template.layout.font, dark.layout.font),
        }),
      });
    }
    return { data: swapColors(fig.data || [], dark.colors), layout: layout };
  }

  // `obj` with `path` ("sliders[0].y", "xaxis2.domain") set to `value`; what lies on the
  // path is copied, never changed in place (the source stays as it was drawn).
  function setPath(obj, path, value) {
    const keys = path.replace(/\[(\d+)\]/g, ".$1").split(".");
    const root = Array.isArray(obj) ? obj.slice() : Object.assign({}, obj);
    let node = root;
    keys.forEach((key, i) => {
      if (i === keys.length - 1) { node[key] = value; return; }
      const next = node[key];
      const copy = Array.isArray(next) ? next.slice()
        : Object.assign(/^\d+$/.test(keys[i + 1]) && next === undefined ? [] : {}, next);
      node[key] = copy;
      node = copy;
    });
    return root;
  }

  const arrangements = (fig) => {
    const meta = fig.layout && fig.layout.meta;
    return (meta && meta.tempsup) || null;
  };

  // The figure with `patch` (attribute paths, for the layout and by trace) applied.
  function patched(fig, patch) {
    let layout = fig.layout;
    Object.keys(patch.layout || {}).forEach((p) => { layout = setPath(layout, p, patch.layout[p]); });
    const data = (fig.data || []).map((trace, i) => {
      const own = (patch.data || {})[i];
      let out = trace;
      Object.keys(own || {}).forEach((p) => { out = setPath(out, p, own[p]); });
      return out;
    });
    return { data: data, layout: layout };
  }

  // The figure in the arrangement the screen's width asks for. The wide one is the figure
  // as drawn, but for what Plotly writes back into it while drawing (a locked aspect ratio
  // narrows an axis's domain to the space it had): those values come from `wide`.
  function arranged(fig) {
    const all = arrangements(fig);
    const patch = all && (isNarrow() ? all.narrow : all.wide);
    return patch ? patched(fig, patch) : fig;
  }

  // What the screen asks of `fig` now: "light", "dark", "light-narrow" or "dark-narrow".
  function wanted(fig) {
    const all = arrangements(fig);
    return (isDark() ? "dark" : PLAIN) + (isNarrow() && all && all.narrow ? "-narrow" : "");
  }

  // `fig` as the screen asks; what differs from it remembers it as its source.
  function view(fig) {
    const state = wanted(fig);
    if (state === PLAIN) return fig;
    let out = arranged(fig);
    if (isDark()) out = darkFigure(out);
    out.layout = merge(out.layout, { _tempsupSource: fig, _tempsupState: state });
    return out;
  }

  // A graph that fills its box (Plotly's `responsive`: the export, the static site) gets a
  // box of the figure's height; Plotly drops layout.height when the window resizes, so
  // the height the page first drew is kept (`_tempsupHeight`).
  function fit(gd, height) {
    if (gd._context && gd._context.responsive && height) gd.style.height = height + "px";
  }

  // Draw `gd` again from its source when the screen asks for another state than it shows.
  function refresh(gd) {
    if (!window.Plotly || !gd.layout) return;
    const source = gd.layout._tempsupSource || { data: gd.data, layout: gd.layout };
    const state = wanted(source);
    if (state === (gd.layout._tempsupState || PLAIN)) return;
    const fig = state === PLAIN ? arranged(source) : view(source);
    fit(gd, state.endsWith("-narrow") ? fig.layout.height : gd._tempsupHeight);
    // Plotly keeps an axis's labels turned (90°) through redraws; in another arrangement the
    // axis has another width: let it choose again
    const full = gd._fullLayout || {};
    Object.keys(full).forEach((k) => { if (/^[xy]axis\d*$/.test(k)) full[k]._tickAngles = full[k]._prevTickAngles = null; });
    window.Plotly.react(gd, fig.data, fig.layout, gd._context);
  }

  function watch(gd) {
    if (gd._tempsupWatched || typeof gd.on !== "function") return;
    gd._tempsupWatched = true;
    gd._tempsupHeight = (gd.layout._tempsupSource || gd).layout.height;
    // after the plot's own work (its margins' redraws) is done
    gd.on("plotly_afterplot", () => setTimeout(() => refresh(gd), 0));
    setTimeout(() => refresh(gd), 0);
  }

  const graphs = () => document.querySelectorAll(".js-plotly-plot");
  if (window.MutationObserver) {
    new MutationObserver(() => {
      if (isDark() || isNarrow()) graphs().forEach(watch);
    }).observe(document.documentElement, { childList: true, subtree: true });
  }
  [darkQuery, narrowQuery].forEach((query) => {
    if (query && query.addEventListener) {
      // after the page's own resizing (Plotly's, and Dash's graphs' 100 ms later) is done:
      // a redraw in the middle of it leaves parts (the slider) where the old size put them
      query.addEventListener("change", () => setTimeout(() => {
        graphs().forEach((gd) => { watch(gd); refresh(gd); });
      }, 250));
    }
  });

  window.tempsupView = { view: view, isDark: isDark, isNarrow: isNarrow, refresh: refresh };
})();
