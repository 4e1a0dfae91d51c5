// The explorer's four panels in their 2 × 2 grid (assets/style.css, a window ≥ 1200 px
// wide): each is a cell of about 430 × 270 px, too small for a panel's figure as it is
// drawn for a column (a title block of 80 px, a legend under the axes). There the player's
// `render` (assets/tempsup.js) draws each figure compact: 10 px type, the title just above
// the axes, the legend beside them when its names are short (else under them), and
// margins that hold all of it — declared, so that Plotly never widens one and draws the
// panel a second time (tests/test_app_browser.py). Another width of the window redraws the
// panels in the arrangement it asks for.
(function () {
  "use strict";
  const query = window.matchMedia ? window.matchMedia("(min-width: 1200px)") : null;
  const PAGES = ["explorer"]; // the pages whose panels are laid out in the grid
  const FONT = 10; // px: ticks, legend, corner texts
  const TITLE_FONT = 12;
  const SUP = 12; // px of each smaller line of a title under its first
  const GAP = 5; // px between a title and the axes
  // A legend entry: ITEM px (its line and the gaps) beside its name's words, measured in
  // the figure's type; a legend: ROW px a row and its frame's PAD
  const ITEM = 44;
  const ROW = 19;
  const PAD = 10;
  const SLACK = 4; // px: words measured here and drawn there may differ a little
  const SIDE = 180; // px: a legend whose entries are all this narrow goes beside the axes
  const AXIS = 46; // px under the axes for the x ticks and the x title
  const NARROWEST = 380; // px: a cell's graph at 1200 px, when the graph is not found

  const active = (page) => !!(query && query.matches) && PAGES.indexOf(page) >= 0;
  const words = (text) => String(text || "").replace(/<[^>]*>/g, "");
  const merge = (a, b) => Object.assign({}, a || {}, b);

  // The width in px of a trace's name as Plotly writes it in `family` at `size` px: a
  // <sub> or <sup> part at 70 % (the words are measured in the page: a canvas's).
  let pen = null;
  function textWidth(name, family, size) {
    pen = pen || document.createElement("canvas").getContext("2d");
    let width = 0;
    let small = 0;
    String(name).split(/(<[^>]*>)/).forEach((part) => {
      const tag = /^<(\/?)(sub|sup)\b/i.exec(part);
      if (tag) { small += tag[1] ? -1 : 1; return; }
      if (!part || part.charAt(0) === "<") return;
      pen.font = (small > 0 ? 0.7 * size : size) + "px " + family;
      width += pen.measureText(part.replace(/&[a-z]+;/g, " ")).width;
    });
    return width;
  }

  // The legend's entries, each as its width in px (one per legend group).
  function entries(data, family) {
    const seen = {};
    return data.filter((t) => {
      if (!t || !t.name || t.showlegend === false || t.type === "heatmap") return false;
      if (t.legendgroup && t.showlegend !== true) {
        if (seen[t.legendgroup]) return false;
        seen[t.legendgroup] = true;
      }
      return true;
    }).map((t) => ITEM + textWidth(t.name, family, FONT));
  }

  // Rows of a horizontal legend of entries `widths` (px) in `width` px.
  function rows(widths, width) {
    let n = 0;
    let used = Infinity;
    widths.forEach((w) => {
      if (used + w > width) { n += 1; used = 0; }
      used += w;
    });
    return n;
  }

  // The graph's width on the page (Dash writes a dict id as sorted JSON), for the legend.
  function graphWidth(id) {
    const key = JSON.stringify(Object.keys(id).sort().reduce((o, k) => { o[k] = id[k]; return o; }, {}));
    const el = document.getElementById(key);
    return (el && el.clientWidth) || NARROWEST;
  }

  // `fig` ({data, layout}) drawn compact for a cell of the grid `width` px wide.
  function compact(fig, width) {
    const layout = merge(fig.layout, {});
    const data = (fig.data || []).map((t) => {
      const size = t && t.textfont && t.textfont.size;
      return size && size > FONT ? merge(t, { textfont: merge(t.textfont, { size: FONT }) }) : t;
    });
    const margin = merge(layout.margin, {});
    layout.font = merge(layout.font, { size: FONT });
    const title = layout.title && layout.title.text;
    if (title) {
      const lines = title.split(/<br\s*\/?>/i).length;
      // the block's last line just above the axes, its first one inside the top margin
      // (Plotly anchors a title's first line: the lines under it hang into the padding)
      layout.title = merge(layout.title, {
        font: merge(layout.title.font, { size: TITLE_FONT }),
        yref: "paper", y: 1, yanchor: "bottom", pad: { t: 0, b: GAP + (lines - 1) * SUP, l: 0, r: 0 },
      });
      margin.t = 6 + TITLE_FONT + 3 + (lines - 1) * SUP + GAP;
    }
    ["xaxis", "yaxis"].forEach((a) => {
      const ax = layout[a];
      if (ax && ax.title) {
        layout[a] = merge(ax, { title: merge(ax.title, { font: merge(ax.title.font, { size: 11 }) }) });
      }
    });
    const template = (layout.template && layout.template.layout) || {};
    const family = (layout.font && layout.font.family) || (template.font && template.font.family) ||
      "\"Open Sans\", verdana, arial, sans-serif";
    const widths = entries(data, family);
    const widest = Math.max(0, ...widths);
    margin.b = AXIS;
    if (widths.length >= 3 && widest <= SIDE) {
      // beside the axes, top-aligned with them
      layout.legend = merge(layout.legend, {
        orientation: "v", x: 1, xref: "paper", xanchor: "left", y: 1, yref: "paper",
        yanchor: "top", font: { size: FONT }, tracegroupgap: 0,
      });
      margin.r = Math.max(margin.r || 0, Math.ceil(widest + PAD + SLACK));
    } else if (widths.length) {
      layout.legend = merge(layout.legend, {
        orientation: "h", x: 0, xref: "container", xanchor: "left", y: 0, yref: "container",
        yanchor: "bottom", font: { size: FONT }, tracegroupgap: 0,
      });
      // Plotly wraps a legend under the axes at their width
      const across = width - (margin.l || 0) - (margin.r || 0);
      margin.b = AXIS + rows(widths, across - SLACK) * ROW + PAD;
    }
    layout.margin = margin;
    return { data: data, layout: layout };
  }

  // What `render` draws for graph `id` of `page`: `fig` as the grid asks, if it does.
  function arrange(fig, id, page) {
    if (!active(page) || !fig.data || !fig.data.length) return fig;
    return compact(fig, graphWidth(id));
  }

  // A window that crosses 1200 px draws the grid's pages again from what they showed last;
  // one resized within the grid's widths too, once it is still (a legend's rows follow
  // its cell's width).
  const shown = {};
  function remember(page, redraw) { if (PAGES.indexOf(page) >= 0) shown[page] = redraw; }
  const redrawAll = () => Object.keys(shown).forEach((page) => shown[page]());
  if (query && query.addEventListener) query.addEventListener("change", redrawAll);
  let still = null;
  window.addEventListener("resize", () => {
    clearTimeout(still);
    still = setTimeout(() => { if (query && query.matches) redrawAll(); }, 300);
  });

  window.tempsupGrid = { arrange: arrange, compact: compact, active: active, remember: remember };
})();
