"""The explorer's "Open a run file" in a real browser (Playwright, the system's Chromium).

A `.pt` state dict of a small `torch.nn.RNN` (ReLU) + `nn.Linear`, written here, is
chosen in the file input: the page loads at the run's link, every panel draws it, the
share link names it, and that link opened in a fresh browser context (no shared
storage) shows the same run. Before it, on the same page, a file with NaN, one with
wrong shapes, a pickle of a Python object and a 200 MB file are each refused with their
one message, the page staying where it was and usable (the next file still opens); the
200 MB file is refused in the browser: no request carries it to the server.

Screenshots go to $TEMPSUP_SHOTS (default: a folder under the system's temp dir).
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

import pytest
import torch

from tempsup.figures.rnn import PANELS
from tests.pw import DESKTOP, new_page, serious_violations, wait_dash, wait_idle

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("TEMPSUP_SHOTS", Path(tempfile.gettempdir()) / "shots-upload"))
FILE_INPUT = "#open-run-upload input[type=file]"
MESSAGE = "#open-run-message"
# every panel of the explorer has traces drawn (plotly keeps them on the graph's div)
ALL_DRAWN = """(names) => names.every((name) => {
  const g = document.querySelector(`[id*='"panel":"${name}"'] .js-plotly-plot`);
  return !!g && Array.isArray(g.data) && g.data.length > 0 && !!g.querySelector('.main-svg');
})"""


# the explorer's controls show what the file held: the ReLU RNN chosen, each box's value
CONTROLS_READ = """(boxes) =>
  !!document.querySelector("#ctl-model input[value='rnn']:checked") &&
  Object.entries(boxes).every(([sel, v]) => (document.querySelector(sel) || {}).value === v)"""


class Gadget:  # a Python object: its pickle names a class to rebuild
    pass


def state_dict(rnn: torch.nn.RNN, readout: torch.nn.Linear) -> dict[str, torch.Tensor]:
    return {
        **{f"rnn.{k}": v for k, v in rnn.state_dict().items()},
        **{f"readout.{k}": v for k, v in readout.state_dict().items()},
    }


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    torch.manual_seed(3)
    rnn = torch.nn.RNN(1, 3, nonlinearity="relu", bias=False, batch_first=True)
    readout = torch.nn.Linear(3, 1)
    good = state_dict(rnn, readout)
    nan = dict(good, **{"rnn.weight_hh_l0": good["rnn.weight_hh_l0"].clone()})
    nan["rnn.weight_hh_l0"][1, 2] = float("nan")
    shapes = dict(good, **{"readout.weight": torch.zeros(1, 5)})
    out = {}
    for name, state in (("net.pt", good), ("nan.pt", nan), ("shapes.pt", shapes)):
        torch.save(state, tmp_path / name)
        out[name] = tmp_path / name
    out["object.pt"] = tmp_path / "object.pt"
    out["object.pt"].write_bytes(pickle.dumps({"rnn": Gadget()}))
    out["huge.pt"] = tmp_path / "huge.pt"
    with out["huge.pt"].open("wb") as f:  # sparse: 200 MB on paper, nothing on disk
        f.truncate(200 * 2**20)
    return out


REFUSALS = {
    "nan.pt": "nan.pt: rnn.weight_hh_l0 holds NaN (1 of 9 entries)",
    "shapes.pt": "shapes.pt: the readout's in_features must be the RNN's hidden_size 3, got",
    "object.pt": "object.pt: a pickle with Python objects (never loaded",
    "huge.pt": "huge.pt: too large (209.7 MB); the explorer opens files of at most 20 MB",
}


def test_a_pt_state_dict_opens_with_every_panel_and_its_link_and_bad_files_are_refused(
    pw_browser, shipped_app, files
):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = new_page(pw_browser, DESKTOP)
    sent: list[int] = []
    page.on(
        "request",
        lambda r: (
            sent.append(len(r.post_data_buffer or b""))
            if "_dash-update-component" in r.url
            else None
        ),
    )
    try:
        page.goto(shipped_app + "/")
        wait_dash(page)
        page.wait_for_url("**/?model=*")  # the bare page is rewritten to its config's link
        start = page.url
        for name, said in REFUSALS.items():
            page.set_input_files(FILE_INPUT, str(files[name]))
            page.wait_for_function(
                "([sel, text]) => (document.querySelector(sel).textContent || '').startsWith(text)",
                arg=[MESSAGE, said],
            )
            message = page.locator(MESSAGE)
            assert message.get_attribute("role") == "alert"
            assert "Traceback" not in message.text_content()
            message.scroll_into_view_if_needed()
            page.locator(".open-run").screenshot(path=str(SHOTS / f"refused-{name}.png"))
            assert page.url == start, f"{name} moved the page"
            assert page.evaluate("1 + 1") == 2  # the page still answers
        assert max(sent, default=0) < 2_000_000, f"a request carried {max(sent)} bytes"
        assert not serious_violations(page, "a refusal shown: ")

        # the same page, still usable: the good file opens at its link
        page.set_input_files(FILE_INPUT, str(files["net.pt"]))
        page.wait_for_url("**run=*")
        wait_dash(page)
        page.wait_for_function(ALL_DRAWN, arg=list(PANELS))
        page.locator(".jobbar", has_text="Opened from a file").first.wait_for()
        # the controls show what was read: the ReLU RNN's exact form (k + 1, N_h + N_x)
        page.wait_for_function(CONTROLS_READ, arg={"#ctl-k-box": "4", "#ctl-hidden-box": "4"})
        share = page.locator("#share-link")
        page.wait_for_function(
            "() => /run=[0-9a-f]{64}/.test(document.querySelector('#share-link').href)"
        )
        link = share.get_attribute("href")
        digest = link.split("run=")[1][:64]
        assert digest in page.url
        wait_idle(page)
        summary = page.locator(".frame-label").first.text_content()
        page.screenshot(path=str(SHOTS / "opened-net.pt.png"), full_page=True)
        page.locator(".open-run").screenshot(path=str(SHOTS / "open-run-card.png"))
        assert not serious_violations(page, "the opened run: ")

        # the share link in a fresh context (its own storage): the same run, not trained
        other = new_page(pw_browser, DESKTOP)
        try:
            other.goto(link)
            wait_dash(other)
            other.wait_for_function(ALL_DRAWN, arg=list(PANELS))
            other.locator(".jobbar", has_text=digest[:12]).first.wait_for()
            wait_idle(other)
            assert other.locator(".frame-label").first.text_content() == summary
            for panel in PANELS:
                sel = f'[id*=\'"panel":"{panel}"\'] .js-plotly-plot'
                mine = page.eval_on_selector(sel, "(g) => JSON.stringify(g.data)")
                theirs = other.eval_on_selector(sel, "(g) => JSON.stringify(g.data)")
                assert mine == theirs, f"the {panel} panel differs"
            other.screenshot(path=str(SHOTS / "share-link-fresh-context.png"), full_page=True)
        finally:
            other.context.close()
    finally:
        page.context.close()
