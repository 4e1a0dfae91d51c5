// The lesson (app/pages/lesson.py): a step link (Next step →, the step list) redraws the
// step's card in place, and the link that had the focus is gone with it; the focus then
// goes to the new step's heading, so a keyboard continues from the new question and a
// screen reader reads where it is, instead of starting again at the top of the page.
(function () {
  "use strict";
  const HEADING = ".lesson-step h2";
  const WAIT_MS = 10000;

  document.addEventListener("click", function (event) {
    const link = event.target.closest && event.target.closest("#lesson-body a[href*='step=']");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    const text = () => (document.querySelector(HEADING) || {}).textContent;
    const old = text();
    const until = Date.now() + WAIT_MS;
    (function look() {
      if (text() !== undefined && text() !== old) document.querySelector(HEADING).focus();
      else if (Date.now() < until) window.setTimeout(look, 50);
    })();
  });
})();
