"""The training loss (tempsup.losses) against independent computations, piece by piece.

tests/test_fast_paths.py checks every fast path against the model's own time loop;
these check the pieces against numbers worked out by hand, closed forms, brute-force
sums and float64 gradient checks, so that a change to any one of them shows
(mutation testing: scripts/mutation losses).
"""

from __future__ import annotations

import torch

from tempsup.losses import expected_lagged_gram


def test_expected_lagged_gram_by_hand() -> None:
    """T = 2, N_x = 1: lags 0 and 1 both exist at one step, lag 0 alone at two."""
    p, mu, nu = 0.3, 0.5, 0.4
    got = expected_lagged_gram(p, mu, nu, 2, 1, bias=True)
    one, two = p * nu, p * p * mu * mu  # E[x²], E[x x'] of two independent inputs
    want = torch.tensor(
        [[2 * one, two, 2 * p * mu], [two, one, p * mu], [2 * p * mu, p * mu, 2.0]],
        dtype=torch.float64,
    )
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(
        expected_lagged_gram(p, mu, nu, 2, 1, bias=False), want[:2, :2], rtol=1e-12, atol=0
    )
