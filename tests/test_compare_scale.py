"""Compare's one scale (`app.pages.compare.common_scale`): axes that map values to
coordinates alike get the range that holds both sides; the loss panel's symmetric-log
axis, whose linear band follows each run's config, shares a scale only when the bands are
the same, and then carries the tick labels of both sides. What a panel fills out to its
axes' edges (the loss cursor's line, the interference-free band) still reaches them on the
common scale."""

from __future__ import annotations

import numpy as np

from app.pages.compare import common_scale, own_scales
from app.view import unpacked
from tempsup.figures._common import symlog_axis
from tempsup.figures.loss import symlog_band
from tempsup.model.config import RunConfig


def views(loss_left: dict, loss_right: dict) -> dict:
    """Two finished sides with a directions panel (plain axes) and a loss panel."""

    def side(loss: dict, r: float) -> dict:
        return {
            "n": 3,
            "layouts": {
                "directions": {"xaxis": {"range": [-r, r]}, "yaxis": {"range": [-r, r]}},
                "loss": {"xaxis": {"range": [-4, 204]}, "yaxis": loss},
            },
        }

    return {"left": side(loss_left, 1.0), "right": side(loss_right, 2.0)}


def label_at(axis: dict) -> dict[str, float]:
    return dict(zip(axis["ticktext"], axis["tickvals"], strict=True))


def test_loss_axes_with_different_bands_each_keep_their_own_scale() -> None:
    """A value's height depends on the band c: unioning the coordinates of two bands
    would draw 1 on one side where 0.1 is on the other."""
    a = symlog_axis(1e-4, [-0.5, 4.5], "loss")
    b = symlog_axis(1e-5, [-0.5, 3.2], "loss")
    out = common_scale(views(a, b))
    assert out["left"]["layouts"]["loss"]["yaxis"] == a
    assert out["right"]["layouts"]["loss"]["yaxis"] == b
    assert own_scales(views(a, b)) == ["loss"]
    for side in ("left", "right"):  # the plain axes still share one scale
        layouts = out[side]["layouts"]
        assert layouts["directions"]["xaxis"]["range"] == [-2.0, 2.0]
        assert layouts["loss"]["xaxis"]["range"] == [-4, 204]


def test_loss_axes_with_one_band_share_the_range_and_both_sides_labels() -> None:
    c = 1e-4
    a = symlog_axis(c, [-0.5, 4.5], "loss")  # reaches 1
    b = symlog_axis(c, [-2.5, 2.0], "loss")  # reaches −0.01
    assert "1" in a["ticktext"] and "1" not in b["ticktext"]
    out = common_scale(views(a, b))
    assert own_scales(views(a, b)) == []
    labels = label_at(a) | label_at(b)
    for side in ("left", "right"):
        axis = out[side]["layouts"]["loss"]["yaxis"]
        assert axis["range"] == [-2.5, 4.5]
        assert label_at(axis) == labels  # every label where symlog puts its value
        assert axis["tickvals"] == sorted(axis["tickvals"])


def test_a_dense_and_a_sparse_run_have_loss_bands_a_decade_apart() -> None:
    """The browser tests' pair (p = 0.7 against 0.1): their loss panels cannot share one
    scale, which is why the page says so."""
    tiny = dict(k=2, hidden=2, inputs=1, steps=200, batch=64, seeds=2, snapshot_every=10)
    dense = RunConfig(model="ssm", sparsity=0.3, **tiny)
    sparse = RunConfig(model="ssm", sparsity=0.9, **tiny)
    bands = [symlog_band(cfg) for cfg in (dense, sparse)]
    assert bands[0] == 10 * bands[1]
    a, b = (symlog_axis(c, [-1.0, 4.5], "loss") for c in bands)
    shared = (label_at(a).keys() & label_at(b).keys()) - {"0"}
    assert shared and all(label_at(a)[t] != label_at(b)[t] for t in shared)
    assert own_scales(views(a, b)) == ["loss"]


def test_each_sides_loss_cursor_crosses_the_range_holding_both() -> None:
    """Two runs of one config (one band) whose losses differ a hundredfold: on the common
    scale each side's cursor line still reaches the bottom of the whole loss axis and the
    top of its own curves (above them is the band of the label in the corner, which the
    cursor does not enter), and autoscale stops at that axis's range, not one side's."""
    from app.view import _view
    from tempsup.figures import PANEL_SET
    from tempsup.io.run import Run
    from tests.test_figures import E1, SPIRAL, make_run

    def run(seed: int, scale: float) -> Run:
        made = make_run(SPIRAL, E1, frames=4, model="ssm", k=3, seed=seed)
        return Run(made.config, {**made.arrays, "loss": made["loss"] * scale})

    sides = {"left": run(1, 1.0), "right": run(2, 100.0)}
    views = {side: _view(r, 0, 0, PANEL_SET, lean=True) for side, r in sides.items()}
    own = {side: views[side]["layouts"]["loss"]["yaxis"]["range"] for side in views}
    assert own["left"] != own["right"] and own_scales(views) == []
    out = common_scale(views)
    lo, hi = min(*own["left"], *own["right"]), max(*own["left"], *own["right"])
    for side in ("left", "right"):
        axis = out[side]["layouts"]["loss"]["yaxis"]
        assert axis["range"] == [lo, hi]
        assert axis["autorangeoptions"] == {"clipmin": lo, "clipmax": hi}
        (line,) = [
            t for t in unpacked(out[side]["base"]["loss"]) if t.get("name") == "current step"
        ]
        top = views[side]["layouts"]["loss"]["yaxis"]["range"][1]  # its own, with the band
        assert line["y"][0] < lo and line["y"][1] < top <= hi, (line["y"], lo, hi)
        curves = [t for t in unpacked(out[side]["base"]["loss"]) if t.get("mode") == "lines"]
        drawn = [y for t in curves if t is not line and "seeds" not in t["name"] for y in t["y"]]
        assert line["y"][1] >= max(y for y in drawn if y is not None), side


def test_each_sides_interference_free_band_fills_the_range_holding_both() -> None:
    """A run whose projections reach -8 beside one whose stay near 0: on the common scale
    the second's band (a_s ≤ 0) still fills its panel down to the bottom."""
    from app.view import _view
    from tempsup.figures import PANEL_SET
    from tests.test_figures import E1, SPIRAL, make_run

    sides = {"left": make_run(SPIRAL, E1, frames=3, model="ssm", k=3, seed=3),
             "right": make_run(SPIRAL, 3.0 * E1, frames=3, model="ssm", k=3, seed=4,
                               W_y=np.array([[-3.0], [0.0]]))}  # fmt: skip
    views = {side: _view(r, 0, 0, PANEL_SET, lean=True) for side, r in sides.items()}
    own = {side: views[side]["layouts"]["projections"]["yaxis"]["range"] for side in views}
    out = common_scale(views)
    lo = min(own["left"][0], own["right"][0])
    assert own["left"][0] > lo + 1  # the left run's own axis stops well above the common bottom
    for side in ("left", "right"):
        axis = out[side]["layouts"]["projections"]["yaxis"]
        assert axis["range"][0] == lo and axis["autorangeoptions"]["clipmin"] == lo
        (band,) = [t for t in unpacked(out[side]["base"]["projections"])
                   if t.get("name", "").startswith("interference-free")]  # fmt: skip
        assert min(band["y"]) < lo, (band["y"], lo)
