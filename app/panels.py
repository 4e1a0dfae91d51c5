"""The four synchronised panels: their cards and what to look for in each.

Figures themselves come from `tempsup.figures` (shared with HTML export); the
browser swaps each graph's data for the frame under the scrubber
(`assets/tempsup.js`), so scrubbing never waits for the server.
"""

from __future__ import annotations

from dataclasses import dataclass

from dash import dcc, html

from app import ids
from tempsup.palette import empty_figure

PAPER_URL = "https://openreview.net/forum?id=7cMzTpbJHC"


@dataclass(frozen=True)
class Panel:
    name: str  # tempsup.figures panel name
    graph: str  # component id
    title: str
    explanation: str


PANELS = (
    Panel(
        "directions",
        ids.GRAPH_DIRECTIONS,
        "Feature directions w_s in the hidden state",
        "Each arrow is where an input s steps old sits in the hidden state (w_s = W_h^s W_x). "
        "The network must keep the intermediate ones (s < k), read out the output one (s = k) "
        "and forget the old ones. With a ReLU readout, everything in the shaded half-space "
        "(w_yᵀh ≤ 0) is invisible to the readout: watch the sparse models park intermediate "
        "directions there. The hidden basis is not fixed by the function (a stretch orthogonal "
        "to w_k changes nothing the network computes), so the arrows are drawn in the canonical "
        "minimum-norm gauge: the smallest weights computing the same function, w_y along +h_1 "
        "(ReLU RNN: units sorted by readout weight). Lengths and angles are that gauge's; "
        "the projections w_yᵀw_s in the hover text and the half-space count are gauge-free.",
    ),
    Panel(
        "loss",
        ids.GRAPH_LOSS,
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
        ids.GRAPH_PROJECTIONS,
        "Projections onto the readout",
        "a_s = w_yᵀw_s is how strongly an input of age s reaches the output. Ideal recall is "
        "a_k = 1 and a_s ≤ 0 elsewhere (under a ReLU readout negative is free). The linear RNN "
        "can only make a damped oscillation; ReLU models cut old inputs off sharply. With "
        "vector input (N_x > 1) the panel is a heatmap of W_yᵀW_k instead: row i, column j is "
        "how strongly feature j of the input k steps back reaches output i (ideal: the "
        "identity).",
    ),
    Panel(
        "eigen",
        ids.GRAPH_EIGEN,
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


def card(panel: Panel) -> html.Div:
    return html.Div(
        className="card panel",
        children=[
            html.H2(panel.title),
            dcc.Graph(
                id=panel.graph,
                figure=empty_figure("waiting for the first frame…"),
                config={"displaylogo": False, "responsive": True},
                className="graph",
                style={"height": "30rem"},
            ),
            html.P(panel.explanation, className="explain"),
        ],
    )


def grid() -> html.Div:
    return html.Div(className="panels", children=[card(p) for p in PANELS])
