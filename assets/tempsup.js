// Client-side callbacks of the tempsup explorer (see app/player.py).
// The VIEW store holds, per panel, the figure data of every frame; these
// functions only pick a frame, so scrubbing and playing never wait for the server.
(function () {
  "use strict";
  const PANELS = ["directions", "loss", "projections", "eigen"];
  const noUpdate = () => window.dash_clientside.no_update;

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

  function clampFrame(frame, n) {
    const i = typeof frame === "number" ? Math.round(frame) : n - 1;
    return Math.max(0, Math.min(i, n - 1));
  }

  window.dash_clientside = Object.assign({}, window.dash_clientside, {
    tempsup: {
      render: function (frame, view) {
        const panels = (view && view.panels) || PANELS;
        if (!view || !view.n) {
          const msg = (view && view.message) || "";
          return panels.map(() => emptyFigure(msg)).concat([msg]);
        }
        const i = clampFrame(frame, view.n);
        const figs = panels.map((p) => {
          // the frame's moving traces spliced into the shared ones (app/view.py)
          const data = (view.base[p] || []).slice();
          const moving = view.moving[p] || [];
          const frameTraces = (view.frames[p] || [])[i] || [];
          // a frame's trace may hold only what differs from the shared one: merge it over
          moving.forEach((idx, j) => {
            if (frameTraces[j]) data[idx] = Object.assign({}, data[idx], frameTraces[j]);
          });
          return { data: data, layout: view.layouts[p] || {} };
        });
        // the status line of this very frame (app/view.py, status_lines)
        const summary = (view.summaries || [])[i];
        const label = "step " + view.steps[i] + " · frame " + (i + 1) + "/" + view.n +
          (summary ? " · " + summary : "");
        return figs.concat([label]);
      },

      // Compare page: one scrubber over the fraction of training drives both runs.
      render_pair: function (fraction, views) {
        const out = [];
        const labels = [];
        ["left", "right"].forEach((side) => {
          const view = views && views[side];
          let frame = null;
          if (view && view.n) {
            const last = view.steps[view.n - 1] || 1;
            const target = (fraction || 0) * last;
            let best = 0;
            view.steps.forEach((st, i) => {
              if (Math.abs(st - target) < Math.abs(view.steps[best] - target)) best = i;
            });
            frame = best;
          }
          const figs = window.dash_clientside.tempsup.render(frame, view);
          out.push(...figs.slice(0, PANELS.length));
          labels.push(side + ": " + figs[PANELS.length]);
        });
        return out.concat([labels.join("  |  ")]);
      },

      tick_fraction: function (n, value) {
        const next = Math.round(((value || 0) + 0.01) * 100) / 100;
        if (next >= 1) return [1, true, "Play"];
        return [next, noUpdate(), noUpdate()];
      },

      toggle_fraction: function (clicks, disabled, value) {
        if (disabled) return [false, "Pause", (value || 0) >= 1 ? 0 : noUpdate()];
        return [true, "Play", noUpdate()];
      },

      // The slider's range follows the frames; while training it follows the newest.
      // `request` (optional): the frame a share link asks for, applied once that run's
      // frames are all in; the request is then emptied (the third output).
      follow: function (view, value, max, job, request) {
        const n = view && view.n ? view.n : 0;
        const newMax = Math.max(0, n - 1);
        const training = job && (job.state === "queued" || job.state === "running");
        const withRequest = arguments.length > 4;
        const out = (v, clear) => (withRequest ? [newMax, v, clear ? null : noUpdate()]
          : [newMax, v]);
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

      toggle_play: function (clicks, disabled, value, max) {
        if (disabled) {
          // start playing; from the start if we are at the end
          const start = value >= max ? 0 : noUpdate();
          return [false, "Pause", start];
        }
        return [true, "Play", noUpdate()];
      },

      tick: function (n, value, max) {
        const next = (value || 0) + 1;
        if (next >= max) {
          return [max, true, "Play"];
        }
        return [next, noUpdate(), noUpdate()];
      },

      step: function (prev, next, value, max) {
        const trig = window.dash_clientside.callback_context.triggered_id;
        const v = value || 0;
        if (trig === "btn-prev") return Math.max(0, v - 1);
        return Math.min(max || 0, v + 1);
      },

      job_bar: function (status, config) {
        if (!status || !config || status.key !== config.key) {
          return ["", { width: "0%" }, true];
        }
        return [status.text, { width: status.pct + "%" }, !status.active];
      },

      // The link to exactly this view: the config, then the seed shown and the frame
      // (1-based, as the label counts) once a run is on screen (app/urlstate.py).
      share_link: function (search, frame, job, view) {
        const params = new URLSearchParams((search || "").replace(/^\?/, ""));
        params.delete("view_seed");
        params.delete("frame");
        if (view && view.n && job && job.key === view.key && typeof job.seed === "number") {
          params.set("view_seed", String(job.seed));
          params.set("frame", String(clampFrame(frame, view.n) + 1));
        }
        const query = params.toString();
        return window.location.origin + window.location.pathname + (query ? "?" + query : "");
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
    const link = event.target && event.target.closest && event.target.closest("#share-link");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    const feedback = document.getElementById("share-feedback");
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
    const target = { ArrowLeft: "btn-prev", ArrowRight: "btn-next", " ": "btn-play" }[event.key];
    if (!target) return;
    const button = document.getElementById(target);
    if (button) {
      event.preventDefault();
      button.click();
    }
  });
})();
