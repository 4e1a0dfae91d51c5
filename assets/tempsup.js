// Client-side callbacks of tempsup (app/player.py, app/jobwidget.py, app/pages/compare.py).
// A page's view store holds, per panel, the figure data of every frame; these
// functions only pick a frame, so scrubbing and playing never wait for the server.
// Which panels a page shows is read from the page itself: each graph's id names its
// panel ({"type": "panel-graph", "page": …, "panel": …}, app/ids.py).
(function () {
  "use strict";
  const noUpdate = () => window.dash_clientside.no_update;
  // The ids of the components an output of the running callback writes (ALL: a list).
  const outputIds = (i) => {
    const out = window.dash_clientside.callback_context.outputs_list[i];
    return (Array.isArray(out) ? out : [out]).map((o) => o.id);
  };

  function emptyFigure(message) {
    return {
      data: [],
      layout: {
        xaxis: { visible: false },
        yaxis: { visible: false },
        margin: { l: 10, r: 10, t: 10, b: 10 },
        annotations: [{ text: message || "", showarrow: false, font: { size: 14, color: "#667" },
                        xref: "paper", yref: "paper", x: 0.5, y: 0.5 }],
        paper_bgcolor: "white",
        plot_bgcolor: "white",
      },
    };
  }

  // Plots as the screen asks (dark scheme, a phone's narrow arrangement): the page head's
  // script (tempsup/figures/view.js, shared with the export and the static site). The
  // client-side panels are drawn so at once; it redraws every plot when the screen changes.
  const shown = (fig) => (window.tempsupView ? window.tempsupView.view(fig) : fig);

  function clampFrame(frame, n) {
    const i = typeof frame === "number" ? Math.round(frame) : n - 1;
    return Math.max(0, Math.min(i, n - 1));
  }

  // A panel's shared traces: a finished run's base is JSON text (app/view.py _view), parsed
  // once per view rather than at every frame drawn while playing; a stream's is not text.
  const parsedBases = new WeakMap();
  function baseTraces(view, p) {
    const base = view.base[p] || [];
    if (typeof base !== "string") return base;
    let parsed = parsedBases.get(view.base);
    if (!parsed) {
      parsed = {};
      parsedBases.set(view.base, parsed);
    }
    if (!(p in parsed)) parsed[p] = JSON.parse(base);
    return parsed[p];
  }

  // The figures of `panels` at `frame` of `view` (a page's view store, app/view.py) and the
  // label under the player: the frame's moving traces spliced into the shared ones;
  // `arrange(fig, j)`, if given, lays out the figure of panels[j] for its page first.
  function draw(frame, view, panels, arrange) {
    if (!view || !view.n) {
      const msg = (view && view.message) || "";
      const empty = () => shown(emptyFigure(msg));
      return { figures: panels.map(empty), label: msg };
    }
    const i = clampFrame(frame, view.n);
    const figures = panels.map((p, j) => {
      const data = baseTraces(view, p).slice();
      const moving = view.moving[p] || [];
      // a frame is JSON text (app/view.py packed: encoded once for every page it is sent to)
      const packed = (view.frames[p] || [])[i] || [];
      const frameTraces = typeof packed === "string" ? JSON.parse(packed) : packed;
      // a frame's trace may hold only what differs from the shared one (a finished run's)
      // or from the stream's first frame (`template`, a streaming run's): merge it over
      const template = (view.template || {})[p] || [];
      moving.forEach((idx, j) => {
        if (frameTraces[j]) {
          data[idx] = Object.assign({}, data[idx], template[j] || {}, frameTraces[j]);
        }
      });
      const layout = view.layouts[p] || {};
      const fig = { data: atCorners(data, layout), layout: layout };
      return shown(arrange ? arrange(fig, j) : fig);
    });
    // "frame 41 of 101 (step 800)" as on every surface (tempsup/core/frames.py frame_label;
    // app/player.py label is this line in Python), then the status line of this very frame
    const summary = (view.summaries || [])[i];
    const label = "frame " + (i + 1) + " of " + view.n + " (step " + view.steps[i] + ")" +
      (summary ? " · " + summary : "");
    return { figures: figures, label: label };
  }

  // A corner text (tempsup/figures/_common.py corner_text, `meta.corner` its inset) kept at
  // the top-left corner of the axes as this layout draws them, and a text hanging from the
  // top (`meta.top`, the loss panel's label) kept that far below the y axis's top: a frame
  // places them on the axes of the frames up to it (a frame streamed in is the finished
  // run's), and Compare puts both runs' panels on one scale, wider than one run's own.
  // Where they are there already (to the 4 digits they were rounded to) they are left as
  // they came. tempsup/figures/panel.py at_corners is this function in Python.
  function atCorners(data, layout) {
    const xr = layout.xaxis && layout.xaxis.range;
    const yr = layout.yaxis && layout.yaxis.range;
    if (!Array.isArray(xr) || !Array.isArray(yr)) return data;
    const near = (a, b, span) => Math.abs(a - b) <= 1e-3 * Math.abs(span);
    return data.map((t) => {
      const meta = (t && t.meta) || {};
      const corner = meta.corner;
      const top = meta.top;
      let x, y;
      if (typeof corner === "number" && t.x && t.y) {
        x = xr[0] + corner * (xr[1] - xr[0]);
        y = yr[1] - corner * (yr[1] - yr[0]);
      } else if (typeof top === "number" && t.x && t.y) {
        x = t.x[0];
        y = yr[1] - top * (yr[1] - yr[0]);
      } else {
        return t;
      }
      if (near(t.x[0], x, xr[1] - xr[0]) && near(t.y[0], y, yr[1] - yr[0])) return t;
      return Object.assign({}, t, { x: [x], y: [y] });
    });
  }

  // The frame of `view` whose step is nearest to `fraction` of its training (null: none).
  function nearestFrame(view, fraction) {
    if (!view || !view.n) return null;
    const target = fraction * (view.steps[view.n - 1] || 1);
    let best = 0;
    view.steps.forEach((st, i) => {
      if (Math.abs(st - target) < Math.abs(view.steps[best] - target)) best = i;
    });
    return best;
  }

  window.dash_clientside = Object.assign({}, window.dash_clientside, {
    tempsup: {
      // The page's panels (one graph each, in page order) at `frame`, and the label.
      // On a page whose panels are a grid (assets/panel-grid.js), each is drawn for its
      // cell; when the window leaves or enters the grid's widths they are drawn again.
      render: function (frame, view) {
        const ids = outputIds(0);
        const grid = window.tempsupGrid;
        const page = ids.length ? ids[0].page : null;
        const arrange = grid ? (fig, j) => grid.arrange(fig, ids[j], page) : null;
        const drawn = draw(frame, view, ids.map((id) => id.panel), arrange);
        if (grid && page) {
          grid.remember(page, () => {
            const again = draw(frame, view, ids.map((id) => id.panel), arrange);
            ids.forEach((id, j) => window.dash_clientside.set_props(id, { figure: again.figures[j] }));
          });
        }
        return [drawn.figures, drawn.label];
      },

      // Compare page: one scrubber over the percentage of training drives both runs.
      render_pair: function (percent, views) {
        const graphs = outputIds(0);
        const labels = [];
        const figures = {};
        ["left", "right"].forEach((side) => {
          const view = views && views[side];
          const panels = graphs.filter((id) => id.side === side).map((id) => id.panel);
          const drawn = draw(nearestFrame(view, (percent || 0) / 100), view, panels);
          panels.forEach((p, j) => { figures[side + "/" + p] = drawn.figures[j]; });
          labels.push(side + ": " + drawn.label);
        });
        return [graphs.map((id) => figures[id.side + "/" + id.panel]), labels.join("  |  ")];
      },

      // The slider's range follows the frames; while training it follows the newest.
      // `request`: the frame a share link asks for, applied once that run's frames are
      // all in; the request is then emptied (the third output). What is already so is
      // left alone: a frame set again would draw every panel again (a prefilled page
      // opens on its frame, app/player.py opening_frame).
      follow: function (view, value, max, job, request) {
        const n = view && view.n ? view.n : 0;
        const newMax = Math.max(0, n - 1);
        const training = job && (job.state === "queued" || job.state === "running");
        const out = (v, clear) => [newMax === max ? noUpdate() : newMax,
                                   v === value ? noUpdate() : v, clear ? null : noUpdate()];
        if (request && n && !training && view.key === request.key &&
            typeof request.frame === "number") {
          return out(Math.min(request.frame, newMax), true);
        }
        const atEnd = value === null || value === undefined || value >= max;
        if (training || atEnd || value > newMax) {
          return out(newMax, false);
        }
        return out(noUpdate(), false);
      },

      // Play / Pause toggles the play interval (from the start when at the end); each tick
      // steps one frame and stops at the last. Returns [frame, interval disabled, label].
      play: function (clicks, n, disabled, value, max) {
        const trig = window.dash_clientside.callback_context.triggered_id;
        if (trig && trig.type === "player-tick") {
          const next = (value || 0) + 1;
          return next >= max ? [max, true, "Play"] : [next, noUpdate(), noUpdate()];
        }
        if (disabled) return [value >= max ? 0 : noUpdate(), false, "Pause"];
        return [noUpdate(), true, "Play"];
      },

      step: function (prev, next, value, max) {
        const trig = window.dash_clientside.callback_context.triggered_id;
        const v = value || 0;
        if (trig && trig.type === "player-prev") return Math.max(0, v - 1);
        return Math.min(max || 0, v + 1);
      },

      // The job widget (app/jobwidget.py): its status store drawn while it is about the job
      // in its job store.
      job_bar: function (status, job) {
        if (!status || !job || status.key !== job.key) {
          return ["", { width: "0%" }, true];
        }
        return [status.text, { width: status.pct + "%" }, !status.active];
      },

      // The link to exactly this view: the config, then the seed shown and the frame
      // (1-based, as the label counts) once a run is on screen, and the feature shown
      // when there are several, named as the menu names it (app/urlstate.py).
      share_link: function (search, frame, job, view, feature, features) {
        const params = new URLSearchParams((search || "").replace(/^\?/, ""));
        params.delete("view_seed");
        params.delete("frame");
        params.delete("feature");
        if (view && view.n && job && job.key === view.key && typeof job.seed === "number") {
          params.set("view_seed", String(job.seed));
          params.set("frame", String(clampFrame(frame, view.n) + 1));
        }
        if (typeof feature === "number" && (features || []).length > 1) {
          // A, B, … Z, x26, … (app/urlstate.py feature_name)
          params.set("feature", feature < 26 ? String.fromCharCode(65 + feature) : "x" + feature);
        }
        const query = params.toString();
        return window.location.origin + window.location.pathname + (query ? "?" + query : "");
      },

      // Compare: the page's link (both runs) with the scrubber's place, `at` (percent).
      compare_link: function (search, percent) {
        const params = new URLSearchParams((search || "").replace(/^\?/, ""));
        params.set("at", String(Math.round(percent || 0)));
        return window.location.origin + window.location.pathname + "?" + params.toString();
      },

      // × on a notice (app/controls.py notice) empties it.
      dismiss: function () {
        return "";
      },

      client_id: function (pathname, current) {
        if (current) return noUpdate();
        const rnd = (window.crypto && window.crypto.randomUUID) ? window.crypto.randomUUID()
          : String(Math.random()).slice(2) + String(Date.now());
        return rnd;
      },
    },
  });

  // The share link copies itself on a click and says so (a new tab still opens it).
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      const box = document.createElement("textarea");
      box.value = text;
      document.body.appendChild(box);
      box.select();
      const ok = document.execCommand("copy");
      document.body.removeChild(box);
      (ok ? resolve : reject)();
    });
  }

  document.addEventListener("click", function (event) {
    const link = event.target && event.target.closest && event.target.closest("a.share");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    const feedback = link.parentElement.querySelector(".share-feedback");
    const say = (text) => { if (feedback) feedback.textContent = text; };
    copyText(link.href).then(
      () => say("copied"),
      () => say("copy it from the address: right-click the link"),
    );
  });

  // Keyboard: ← and → step through frames, space plays or pauses (not while typing, and
  // not on a focused slider, which steps by itself).
  document.addEventListener("keydown", function (event) {
    const tag = (event.target && event.target.tagName) || "";
    if (["INPUT", "TEXTAREA", "SELECT"].includes(tag) || event.target.isContentEditable) return;
    const onSlider = event.target.closest && event.target.closest("[role='slider']");
    if (onSlider && event.key !== " ") return;
    const part = { ArrowLeft: "player-prev", ArrowRight: "player-next", " ": "player-play" }[
      event.key];
    if (!part) return;
    // the page's player (app/player.py: its buttons' ids name their part)
    const button = document.querySelector(`button[id*='"type":"${part}"']`);
    if (button) {
      event.preventDefault();
      button.click();
    }
  });
})();
