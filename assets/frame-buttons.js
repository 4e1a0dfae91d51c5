// ◀ Play ▶ beside an animated Plotly figure (app/frame_buttons.py): each button issues
// the figure's own command — a step of its slider, its play or its pause button — so the
// frames shown and Plotly's slider are those of the figure; the label says the frame.
(function () {
  "use strict";
  // The graph of a group of frame buttons: the plot in the group's parent.
  const graphOf = (box) => box.parentElement && box.parentElement.querySelector(".js-plotly-plot");
  const sliderOf = (gd) => gd && gd.layout && (gd.layout.sliders || [])[0];

  // The label and the Play button say what the graph shows now.
  function sync(box, gd) {
    const slider = sliderOf(gd);
    const label = box.querySelector(".frame-label");
    const step = slider && slider.steps[slider.active];
    if (label && step && label.textContent !== step.label) label.textContent = step.label;
    const play = box.querySelector("[data-frames='play']");
    if (play) play.textContent = gd._framesPlaying ? "Pause" : "Play";
  }

  // Follow the graph once: the label is written where an animation stops (a step, a
  // pause, the end of a play, Plotly's own slider or buttons), not at every frame of a
  // play, which a screen reader would read out one after the other.
  function watch(box, gd) {
    if (gd._framesWatched || typeof gd.on !== "function") return;
    gd._framesWatched = true;
    const stopped = () => { gd._framesPlaying = false; sync(box, gd); };
    gd.on("plotly_animated", stopped);
    gd.on("plotly_animationinterrupted", stopped);
  }

  function stepBy(box, gd, delta) {
    const slider = sliderOf(gd);
    const to = Math.max(0, Math.min(slider.steps.length - 1, slider.active + delta));
    if (to === slider.active && !gd._framesPlaying) return;
    const step = slider.steps[to];
    window.Plotly.animate(gd, step.args[0], step.args[1]);
  }

  // Play from the frame shown (from the first when at the last); Pause stops.
  function playOrPause(box, gd) {
    const menu = (gd.layout.updatemenus || [])[0];
    if (!menu || menu.buttons.length < 2) return;
    const [play, pause] = menu.buttons;
    if (gd._framesPlaying) {
      window.Plotly.animate(gd, pause.args[0], pause.args[1]);
      return;
    }
    const slider = sliderOf(gd);
    const atEnd = slider && slider.active >= slider.steps.length - 1;
    const options = Object.assign({}, play.args[1], atEnd ? { fromcurrent: false } : {});
    gd._framesPlaying = true;
    sync(box, gd);
    window.Plotly.animate(gd, play.args[0], options);
  }

  function act(button, command) {
    const box = button.closest(".frame-buttons");
    const gd = box && graphOf(box);
    if (!gd || !sliderOf(gd) || !window.Plotly) return;
    watch(box, gd);
    if (command === "play") playOrPause(box, gd);
    else stepBy(box, gd, command === "prev" ? -1 : 1);
  }

  // Follow every animation with buttons from its first drawing (its label then stays true
  // also when only Plotly's own slider is used).
  const boxes = document.getElementsByClassName("frame-buttons");
  if (window.MutationObserver) {
    new MutationObserver(() => {
      Array.prototype.forEach.call(boxes, (box) => {
        const gd = graphOf(box);
        if (gd && sliderOf(gd)) watch(box, gd);
      });
    }).observe(document.documentElement, { childList: true, subtree: true });
  }

  document.addEventListener("click", function (event) {
    const button = event.target.closest && event.target.closest(".frame-buttons [data-frames]");
    if (button) act(button, button.getAttribute("data-frames"));
  });

  // ← and → step while one of the buttons has the focus.
  document.addEventListener("keydown", function (event) {
    const button = event.target.closest && event.target.closest(".frame-buttons [data-frames]");
    const command = { ArrowLeft: "prev", ArrowRight: "next" }[event.key];
    if (!button || !command) return;
    event.preventDefault();
    act(button, command);
  });
})();
