// The explorer's "Open a run file" (app/open_run.py): a file above the limit is refused
// here, before it is read or sent. dcc.Upload's max_size drops such a file silently; this
// says why, in the words the server uses (tempsup/io/upload.py too_large), in the message
// line under the box. The wrapper around the upload names the limit and that line.
(function () {
  "use strict";
  function check(event) {
    const target = event.target;
    const zone = target && target.closest ? target.closest("[data-max-bytes]") : null;
    if (!zone) return;
    const files = event.type === "drop"
      ? (event.dataTransfer && event.dataTransfer.files)
      : target.files;
    if (!files || !files.length) return;
    const limit = Number(zone.getAttribute("data-max-bytes"));
    const file = files[0];
    if (!(file.size > limit) || !window.dash_clientside || !window.dash_clientside.set_props) {
      return;
    }
    const text = file.name + ": too large (" + (file.size / 1e6).toFixed(1) +
      " MB); the explorer opens files of at most " + Math.round(limit / 1e6) + " MB";
    window.dash_clientside.set_props(zone.getAttribute("data-message"), { children: text });
  }
  // capture: seen before the upload component reads (or, above the limit, drops) the file
  document.addEventListener("change", check, true);
  document.addEventListener("drop", check, true);
})();
