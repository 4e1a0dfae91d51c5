"""The four synchronised panels: their cards and what to look for in each.

Figures themselves come from `tempsup.figures` (shared with HTML export); the
browser swaps each graph's data for the frame under the scrubber
(`assets/tempsup.js`), so scrubbing never waits for the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dash import Input, Output, callback, dcc, html, no_update

from app import ids
from tempsup.config import DEFAULTS, RunConfig
from tempsup.errors import TempsupError
from tempsup.palette import empty_figure

PAPER_URL = "https://openreview.net/forum?id=7cMzTpbJHC"


@dataclass(frozen=True)
class Panel:
    name: str  # tempsup.figures panel name (the graph's id carries it: `ids.graph`)
    title: str
    explanation: str


PANELS = (
    Panel(
        "directions",
        "Feature directions w_s in the hidden state",
        "",  # depends on the model and N_h: `directions_explanation`
    ),
    Panel(
        "loss",
        "Loss and its four terms",
        "The measured loss against the paper's decomposition: task (recall the input k steps "
        "back), mean correction, projection interference (each other input leaking into the "
        "readout) and composition interference (pairs of inputs). For the linear RNN the terms "
        "are exact; for ReLU readouts they are exact to second order in p (pairs of co-active "
        "inputs), and the purple curve is the expected loss itself: the gap is the remainder "
        "of three or more inputs. All of these are gauge-free. Learning comes in steps as "
        "directions separate in temporal order.",
    ),
    Panel(
        "projections",
        "Projections onto the readout",
        "a_s = w_yᵀw_s is how strongly an input of age s reaches the output when it arrives "
        "alone. Ideal recall is a_k = 1 and a_s = 0 elsewhere; under a ReLU readout a_s ≤ 0 "
        "is enough for an input that arrives alone (its negative part is cut off), but not "
        "for one that arrives with the input k steps back: then it subtracts from the output "
        "(composition interference, in the loss panel). The linear RNN "
        "can only make a damped oscillation; ReLU models cut old inputs off sharply. With "
        "vector input (N_x > 1) the panel is a heatmap of W_yᵀW_k instead: row i, column j is "
        "how strongly feature j of the input k steps back reaches output i (ideal: the "
        "identity).",
    ),
    Panel(
        "eigen",
        "Eigenvalues of W_h",
        "For a linear recurrence (linear RNN, SSM), complex eigenvalues inside the unit circle "
        "mean a spiral sink: each step rotates by θ = arg λ and shrinks by |λ|. The ReLU RNN's "
        "recurrence is not linear: its eigenvalues describe W_h alone, and ρ(W_h) > 1 need not "
        "mean divergence. The paper's phase transition shows up here: the swept angle kθ jumps "
        "from ≈ 90° (dense) to ≈ 270° (sparse) for the SSM and the spectral radius drops. kθ is "
        "the swept angle, the summed angle turned from w_0 to w_k one step at a time (not "
        "k·arg λ); it exceeds 360° when the directions wind round more than once, and with real "
        "eigenvalues or N_h > 2 it is still that sum of angles between successive directions. "
        "The eigenvalues and ρ(W_h) are gauge-free; kθ and ‖w_0‖ depend on the hidden basis and "
        "are measured in the canonical minimum-norm gauge (kθ ≥ 0 by convention for N_h = 2).",
    ),
)


def directions_explanation(config: RunConfig) -> str:
    """The directions panel's caption for this model and N_h: what w_s is, what the shaded
    half-space means, and (N_h > 3) what the projection's axes are."""
    if config.relu_hidden:
        what = (
            "Each arrow is where an input s steps old sits in the hidden state when it arrives "
            "alone: the rectified impulse response w_0 = W_x, w_s = W_h ReLU(w_{s−1}), not "
            "W_h^s W_x (the ReLU acts at every step). A lone input u ≥ 0 sits at u·w_s; with "
            "other inputs in the window the ReLU mixes them, and the hidden state is not the "
            "sum of their arrows. "
        )
    else:
        what = (
            "Each arrow is where an input s steps old sits in the hidden state: w_s = W_h^s W_x. "
            "The recurrence is linear, so inputs add up: the hidden state is the sum of every "
            "input in the window times its arrow. "
        )
    task = (
        "The network must keep the intermediate ones (s < k), read out the output one (s = k) "
        "and forget the old ones. "
    )
    bias = " + b" if config.bias else ""
    if config.relu_readout:
        readout = (
            f"With a ReLU readout, an input whose arrow lies in the shaded half-space "
            f"(w_yᵀh{bias} ≤ 0) is invisible to the readout if it arrives alone: watch the "
            "sparse models park intermediate directions there. It is not invisible when it "
            "arrives with the input k steps back: its negative projection then subtracts from "
            "the output (composition interference, in the loss panel), which is why this works "
            "only when inputs are sparse. "
        )
    else:
        readout = (
            "The readout is linear: any a_s = w_yᵀw_s ≠ 0 with s ≠ k leaks into the output, "
            "whatever its sign, so there is no free half-space. "
        )
    axes = ""
    if config.hidden > 3:
        second = (
            "since the tied readout makes w_y = w_k, the plane span(w_y, w_k) would be a line, "
            "so y is the direction orthogonal to w_y in which the other directions spread most "
            "at the last frame"
            if config.tied
            else "y is along the last frame's w_k (its part orthogonal to w_y): the plane "
            "span(w_y, w_k)"
        )
        axes = (
            f"N_h = {config.hidden} is drawn as a projection: x is along w_y (so w_yᵀh and the "
            f"shaded half-plane are exact), and {second}; the axes stay the same in every frame. "
        )
    elif config.hidden == 3:
        axes = "N_h = 3 is drawn in 3-D: drag to rotate. "
    return what + task + readout + axes + GAUGE


GAUGE = (
    "The hidden basis is not fixed by the function (a stretch orthogonal to w_k changes "
    "nothing the network computes), so the arrows are drawn in the canonical minimum-norm "
    "gauge: the smallest weights computing the same function, w_y along +h_1 (ReLU RNN: "
    "units sorted by readout weight). Lengths and angles are that gauge's; the projections "
    "w_yᵀw_s in the hover text and the half-space count are gauge-free."
)


def explanation(panel: Panel, config: RunConfig) -> str:
    """A panel's caption for the config on screen."""
    return directions_explanation(config) if panel.name == "directions" else panel.explanation


def card(panel: Panel, config: RunConfig = DEFAULTS) -> html.Div:
    return html.Div(
        className="card panel",
        children=[
            html.H2(panel.title),
            dcc.Graph(
                id=ids.graph(ids.EXPLORER, panel.name),
                figure=empty_figure("waiting for the first frame…"),
                config={"displaylogo": False, "responsive": True},
                className="graph",
                style={"height": "30rem"},
            ),
            html.P(explanation(panel, config), id=ids.explain(panel.name), className="explain"),
        ],
    )


def grid(config: RunConfig = DEFAULTS) -> html.Div:
    """The four panels, captioned for `config` (the captions follow the CONFIG store)."""
    return html.Div(className="panels", children=[card(p, config) for p in PANELS])


@callback(
    Output(ids.explain("directions"), "children"),
    Input(ids.CONFIG, "data"),
    prevent_initial_call=True,
)
def update_captions(store: Any):
    """The directions caption for the config on screen (a broken store changes nothing)."""
    try:
        config = RunConfig.from_dict(store["config"])
    except (TempsupError, KeyError, TypeError):
        return no_update
    return directions_explanation(config)
