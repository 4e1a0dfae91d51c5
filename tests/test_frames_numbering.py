"""One frame numbering on every surface, a cancelled run's stop, and a refused file's words.

For one run, frame N (counted from 1) is the same step in the app's player label
(computed here without a browser, from the view store the page draws), the share
link's `frame`, `tempsup inspect --frame N`, the HTML export's slider and the
static site's. A run cancelled before its last step says where it stopped on
every surface that reports it, and a file that is no run file is refused with
what it should have been, never with numpy's hint at `allow_pickle`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tempsup.cli import main
from tempsup.errors import TempsupError
from tempsup.io.run import Run, frame
from tempsup.model.config import RunConfig, query_string
from tempsup.model.snapshot import Snapshot

# 6 frames: steps 0, 20, 40, 60, 80, 100. Frame 4 (counted from 1) is step 60; 0-based
# index 4 would be step 80, the off-by-one this file guards against.
CONFIG = RunConfig(model="ssm", k=2, seq_len=8, seeds=2, steps=100, snapshot_every=20)
N = 4
STEP = 60


def hand_run(n_frames: int) -> Run:
    """The first `n_frames` frames of a hand-built run of CONFIG (all 6: a finished run;
    fewer: one cancelled at step 20 · (n_frames - 1))."""
    rng = np.random.default_rng(3)
    W_x0 = np.abs(rng.normal(size=(2, 2, 1)))
    W_h0 = 0.7 * rng.normal(size=(2, 2, 2))
    frames = []
    for f in range(n_frames):
        W_x = W_x0 * (1 + 0.1 * f)
        snap = Snapshot(
            20 * f, W_x, W_h0, W_x.copy(), np.zeros((2, 1)), np.array([0.3, 0.2]) / (1 + f)
        )
        frames.append(frame(CONFIG, snap))
    return Run.from_frames(CONFIG, frames)


@pytest.fixture(scope="module")
def run() -> Run:
    return hand_run(CONFIG.n_snapshots)


@pytest.fixture(scope="module")
def cancelled() -> Run:
    return hand_run(4)  # stopped at step 60 of 100


def slider_labels(fig_json: dict) -> list[str]:
    """The labels of a Plotly figure's slider stops, with its current-value prefix."""
    slider = fig_json["layout"]["sliders"][0]
    prefix = slider.get("currentvalue", {}).get("prefix", "")
    return [prefix + step["label"] for step in slider["steps"]]


def test_frame_n_is_the_same_step_in_the_app_the_link_inspect_the_export_and_the_site(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app import player
    from app.urlstate import view_from_query
    from app.view import full_view

    assert CONFIG.n_snapshots == run.n_frames == 6 and int(run["step"][N - 1]) == STEP
    label = f"frame {N} of 6 (step {STEP})"
    # the share link `?…&frame=4`: the page opens on that frame and its player says so
    request, errors = view_from_query(f"?{query_string(CONFIG)}&frame={N}", CONFIG)
    assert not errors and request is not None
    view = full_view(run, run.best)
    opened = player.opening_frame(view, request)
    assert int(run["step"][opened]) == STEP
    # tempsup inspect --frame 4, as lines and as JSON
    path = run.save(tmp_path / "run.npz")
    assert main(["inspect", str(path), "--frame", str(N)]) == 0
    assert label in capsys.readouterr().out
    assert main(["inspect", str(path), "--frame", str(N), "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert (described["frame"], described["frames"], described["step"]) == (N, 6, STEP)
    # tempsup export: the slider's stop N says the same
    out = tmp_path / "run.html"
    assert main(["export", str(path), "--html", str(out)]) == 0
    capsys.readouterr()
    page = out.read_text(encoding="utf-8")
    assert label in page
    from tempsup.figures import animation_figure

    assert slider_labels(animation_figure(run).to_plotly_json())[N - 1] == label
    # the static site's page of a preset holding this run
    from tempsup.paper.preset import Preset
    from tempsup.teaching import site

    preset = Preset(
        name="numbering", title="t", claim="c", configs=(CONFIG,), labels=("only",),
        recipe=(), main="only", checker=lambda runs: [],
    )  # fmt: skip
    body = site.preset_body(preset, [], {CONFIG.key: run})
    found = re.search(r'id="run-0-figure">(.*?)</script>', body, re.S)
    assert found is not None
    assert slider_labels(json.loads(found.group(1).replace("<\\/", "</")))[N - 1] == label
    # and the app's player label at the frame the link opened (assets/tempsup.js draws
    # the same line; tests/test_app_browser.py checks it in Chromium)
    assert player.label(view, opened).startswith(label + " · ")


@pytest.mark.parametrize(("number", "index"), [(1, 0), (N, N - 1), (6, 5), (-1, 5), (-6, 0)])
def test_inspect_counts_frames_from_1_and_from_the_end(run: Run, number: int, index: int) -> None:
    from tempsup.io.describe import describe

    d = describe(run, frame=number)
    assert d["frame"] == index + 1 and d["step"] == int(run["step"][index])


@pytest.mark.parametrize("number", [0, 7, -7])
def test_a_frame_out_of_range_names_the_valid_range(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str], number: int
) -> None:
    path = run.save(tmp_path / "run.npz")
    assert main(["inspect", str(path), "--frame", str(number)]) == 2
    err = capsys.readouterr().err
    assert f"frame: expected an integer in 1 … 6 (or -1 … -6 from the last), got {number}" in err
    from app.urlstate import view_from_query

    request, errors = view_from_query(f"?{query_string(CONFIG)}&frame={number}", CONFIG)
    assert request is None and errors == [f"frame: expected an integer in [1, 6], got '{number}'"]


def test_a_cancelled_run_says_where_it_stopped(
    cancelled: Run, run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tempsup.figures import export_html
    from tempsup.io.describe import describe, lines

    note = "stopped at step 60 of 100 (cancelled)"
    assert note in export_html(cancelled)
    assert note in "\n".join(lines(describe(cancelled)))
    assert describe(cancelled)["stopped"] == note
    path = cancelled.save(tmp_path / "cancelled.npz")
    assert main(["export", str(path), "--html", str(tmp_path / "c.html")]) == 0
    assert note in capsys.readouterr().out
    assert main(["inspect", str(path)]) == 0
    assert note in capsys.readouterr().out
    # a finished run says nothing of the kind
    assert "stopped at step" not in export_html(run) and describe(run)["stopped"] is None
    assert "complete: 100 of 100 steps" in export_html(run)


def _object_npz() -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, W_x=np.array([{"evil": 1}], dtype=object), config=np.asarray("{}"))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "got"),
    [
        (bytes(range(256)) * 8, "got 2048 bytes of unknown content (starting 00 01 02"),
        (b"", "got an empty file"),
        (b"step,loss\n0,1.0\n", "got text (16 bytes, starting 'step,loss')"),
        (b"PK\x03\x04 cut short", "got a zip archive numpy cannot read as .npz"),
        (_object_npz(), "got an .npz archive holding Python objects (never loaded"),
    ],
)
def test_a_file_that_is_no_run_file_says_what_it_should_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, got: str
) -> None:
    path = tmp_path / "random.npz"
    path.write_bytes(data)
    expected = (
        f"{path}: not a tempsup run file: expected a .npz archive written by `tempsup train`/"
        '`Download run` (see README, "Run file format"), ' + got
    )
    for command in (["inspect", str(path)], ["export", str(path), "--html", "x.html"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert expected in err and "allow_pickle" not in err, err
    with pytest.raises(TempsupError) as refused:
        Run.from_bytes(data, source="upload")
    assert "allow_pickle" not in str(refused.value)
    assert str(refused.value).startswith("upload: not a tempsup run file: expected a .npz")
