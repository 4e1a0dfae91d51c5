"""The training loss of the batched models, each model by its fastest exact path.

    L_m = (1/B) Σ_b Σ_t Σ_i I_i (y_{t,i} − ŷ_{t,i})²,   y_t = x_{t−k}      (science.md §1)

one value per model, summed by the trainer. Every path computes the same
number and the same gradients as the reference — the model's own forward
pass scored by `SquaredError` — up to float rounding (tests/test_fast_paths.py).
The paths differ in where the time goes:

- `linear`: the loss is a quadratic form in the kernel A_s = W_yᵀ W_s. With
  φ_{t,b} = (x_{t−s,j,b})_{s,j} the lagged inputs and d_i = A_{·,i,·} − e_{(k,i)}
  (the target is itself a lagged input), L = Σ_i I_i d_iᵀ C d_i with
  C = (1/B) Σ_{t,b} φφᵀ the batch's lagged Gram matrix (T·N_x square, bias as
  one more row of ones). C is shared by every model of a step, so a model
  costs O((T·N_x)²), not O(B·T).
- `ssm`: where the compiled time loop has its specialised case (scalar input,
  N_h <= 4: `tempsup.training.fused.register_tiled`), that loop, as for the ReLU
  RNN below. Measured (one thread, ms a training step, loop against Toeplitz): 8
  models, batch 512 (the explorer's default run) N_h = 2: 0.55 / 2.04, N_h = 3:
  0.59 / 2.01; 64 models, batch 1024, N_h = 2: 3.14 / 4.35; but N_h = 5: 1.77 / 2.00
  and 21.7 / 5.0, where the loop's general case runs. Otherwise the pre-readout is
  the shared (B·T × T·N_x) Toeplitz matrix of the inputs times every model's
  kernel: one GEMM forward and one for the gradient, computed in the forward
  pass so the (M·N_x × B·T) activations die at once and only the small kernel
  gradient is kept. The element-wise work is one ReLU in place and one norm; the
  targets are non-zero on a fraction p of the columns only, so the residual and
  its mask are taken on those columns alone.
- `rnn` (and any model whose T·N_x is too wide for a Toeplitz matrix): the
  time loop, with a hand-written backward through time on preallocated
  buffers, in a (T, M, N_h, B) layout. The forward loop also reads each h_t
  out while it is in cache; only the recursion of the hidden gradient stays in
  the backward loop, and the weight gradients are three batched products
  around it (δ then overwrites h, which keeps the working set small).

Models whose inputs differ (a sweep over p) or whose delays differ (a sweep
over k) are grouped by (p, k); each group shares one Toeplitz or Gram matrix.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import Tensor

from tempsup.errors import TempsupError
from tempsup.model.recurrences import CONV_MAX_SIDE, BatchedRNN
from tempsup.theory import relu_terms
from tempsup.theory.closed_form import input_moments
from tempsup.training import fused


def sampled_loss(
    model: BatchedRNN,
    x: torch.Tensor,
    p: torch.Tensor,
    weights: torch.Tensor,
    stream: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-model loss (M,) on inputs x (1 or M, T, N_x, B) drawn with probabilities p (M,).

    `weights` (N_x,) are the importance weights I_i; targets are x delayed by
    each model's `model.k`. `stream` (M,) tells which data stream each model's
    inputs come from (runs of different base seeds trained together); models of
    one stream, p and k share their inputs. Differentiable in the model's parameters.
    """
    _, seq_len, n_x, _ = x.shape
    if model.relu_hidden or seq_len * n_x > CONV_MAX_SIDE:
        return recurrent_loss(model, x, weights)
    groups = _groups(p, model.k, stream)
    if model.relu_readout and (
        fused.register_tiled(model.W_x, x)
        or (len(groups) > 1 and _recurrence_is_cheaper(model, seq_len, n_x, len(groups)))
    ):
        return recurrent_loss(model, x, weights)
    kernel = model.kernel(seq_len)  # (M, T, N_x(i), N_x(j))
    bias = model.b_y  # (M, N_x) or None
    losses = []
    order = []
    for idx in groups:
        xg = x[0] if x.shape[0] == 1 else x[int(idx[0])]  # (T, N_x, B): shared by the group
        kg = int(model.k[idx[0]])
        bg = None if bias is None else bias[idx]
        if model.relu_readout:
            losses.append(_relu_kernel_loss(kernel[idx], bg, xg, kg, weights))
        else:
            gram = lagged_gram(xg, bias is not None)
            losses.append(quadratic_loss(kernel[idx], bg, gram, kg, weights))
        order.append(idx)
    return _ungroup(losses, order)


def task_loss(model: BatchedRNN, x: Tensor, y: Tensor, weights: Tensor) -> Tensor:
    """Per-model loss (M,) on any task (`tempsup.model.tasks`): the model's own forward pass
    over inputs x (1 or M, T, n_in, B) against targets y (1 or M, T, n_out, B), output o
    weighted by weights[o], batch mean. The plain path (autograd through the forward):
    the fast paths above hard-wire recall's target x_{t−k}, and keep serving it."""
    err = model(x) - y  # (M, T, n_out, B)
    return (err.square() * weights.view(1, 1, -1, 1)).sum(dim=(1, 2, 3)) / x.shape[-1]


def _recurrence_is_cheaper(model: BatchedRNN, seq_len: int, n_x: int, n_groups: int) -> bool:
    """Whether an SSM whose models see several inputs trains faster by the time loop.

    The Toeplitz path pays, per group of models sharing inputs, for its lagged input
    matrix (B·T × T·N_x) and the passes over it, nearly whatever the group's size; the
    recurrence pays about N_h (N_h + 2 N_x) per model, sample and time step. Measured
    (N_h = 2, T = 20, batch 512, one thread, ms a step, loop against Toeplitz): 8 groups
    of 8 models 14.8 / 28.3, 10 of 8 17.6 / 31.9, 8 of 16 26.0 / 25.3, 10 of 16
    30.9 / 25.4 (a Toeplitz group costs ~2.8 ms, a looped model ~0.18 ms): the loop
    wins up to about 15 models a group.
    """
    n_h, per_group = model.W_h.shape[1], model.W_h.shape[0] / n_groups
    return per_group * n_h * (n_h + 2 * n_x) <= 6 * seq_len * n_x * n_x


def expected_loss(
    model: BatchedRNN, p: torch.Tensor, weights: torch.Tensor, seq_len: int, dist: str
) -> torch.Tensor:
    """The expected loss E[L] (M,) at input probabilities p (M,): exact for the linear model,
    to second order in p for the SSM (`relu_readout_expected_loss`).

    Linear: the same quadratic form as the sampled loss, with the lagged Gram
    matrix replaced by its expectation (`expected_lagged_gram`): gradient flow
    on E[L], noise-free (tempsup.theory.closed_form has the closed form in numpy). The ReLU
    RNN has no such form (its hidden ReLU composes co-active inputs).
    """
    if model.relu_hidden:
        raise TempsupError(
            f"objective: 'expected' needs model 'linear' or 'ssm', got model {model.model!r}"
        )
    mu, nu = input_moments(dist)
    kernel = model.kernel(seq_len)
    bias = model.b_y
    losses, order = [], []
    if model.relu_readout:
        if bias is not None:
            raise TempsupError("objective: 'expected' for the SSM needs no readout bias")
        for idx in _groups(p, model.k):
            k = int(model.k[idx[0]])
            losses.append(relu_readout_expected_loss(kernel[idx], p[idx[0]], k, weights, dist))
            order.append(idx)
        return _ungroup(losses, order)
    for idx in _groups(p, model.k):
        gram = expected_lagged_gram(
            float(p[idx[0]]), mu, nu, seq_len, kernel.shape[2], bias is not None
        )
        bg = None if bias is None else bias[idx]
        losses.append(quadratic_loss(kernel[idx], bg, gram, int(model.k[idx[0]]), weights))
        order.append(idx)
    return _ungroup(losses, order)


def relu_readout_expected_loss(
    kernel: Tensor, p: Tensor, k: int, weights: Tensor, dist: str
) -> Tensor:
    """E[L] of an SSM to second order in p (M,): `tempsup.theory.relu_terms`'s expansion in torch.

    With slots σ = (age s, feature j), a_σ = A_{s,i,j} for readout i, σ* = (k, i)
    its target, n(·) = T − max age and G, H the pair moments E[ReLU(a u + b v)²],
    E[u ReLU(a u + b v)] (u, v i.i.d. magnitudes; science.md §1c), the loss of
    readout i is
        p n(σ*) ν (1 − a*₊)²  +  p Σ_{σ≠σ*} n(σ) ν a_σ₊²
      − 2p² Σ_{σ≠σ*} n(σ*, σ) (H(a*, a_σ) − ν a*₊)
      +  p² Σ_{σ<σ'} n(σ, σ') (G(a_σ, a_σ') − ν a_σ₊² − ν a_σ'₊²).
    Without a bias the pair integrands are homogeneous of degree 2, so G and H
    use `relu_terms`' 32-node angular rule (its closed forms for the SSM agree to
    ~5e-4 at kinks): every term is differentiable in the kernel, so gradient flow
    on it runs without samples. Kernel (M, T, N_x(i), N_x(j)); p a scalar tensor.
    """
    m, seq_len, n_x, _ = kernel.shape
    _, nu = input_moments(dist)
    c, s, w, n1, n2, upper = _pair_rule(dist, seq_len, n_x, kernel.dtype)
    slots = seq_len * n_x
    total = kernel.new_zeros(m)
    for i in range(n_x):
        a = kernel[:, :, i, :].reshape(m, slots)  # slot q = s * N_x + j has age s
        r = torch.relu(a)
        star = k * n_x + i
        single = nu * r.square()  # E ŷ_σ²
        z = torch.relu(a[:, :, None, None] * c + a[:, None, :, None] * s)  # (M, S, S, Q)
        others = torch.ones(slots, dtype=kernel.dtype)
        others[star] = 0.0
        task = p * n1[star] * nu * (1.0 - r[:, star]).square()
        projection = p * (n1 * single * others).sum(1)
        h = (z[:, star] * (c * w)).sum(-1)  # E[u ReLU(a* u + a_σ v)]: (M, S)
        mean = -2.0 * p**2 * (n2[star] * (h - nu * r[:, star : star + 1]) * others)
        g = (z.square() * w).sum(-1)  # (M, S, S)
        pairs = (g - single[:, :, None] - single[:, None, :]) * n2
        composition = p**2 * pairs.masked_select(upper).view(m, -1).sum(1)
        total = total + weights[i] * (task + projection + mean.sum(1) + composition)
    return total


@lru_cache(maxsize=16)
def _pair_rule(dist: str, seq_len: int, n_x: int, dtype: torch.dtype) -> tuple[Tensor, ...]:
    """The angular rule (c, s, w), the fits n(σ), n(σ, σ') and the mask of pairs σ < σ' of
    `relu_readout_expected_loss`: the same at every step of a run, so built once."""
    rule = relu_terms.pair_nodes(dist, True) + relu_terms.fits(seq_len, n_x)
    slots = seq_len * n_x
    upper = torch.triu(torch.ones(slots, slots, dtype=torch.bool), diagonal=1)
    return (*(torch.as_tensor(a, dtype=dtype) for a in rule), upper)


def _ungroup(losses: list[torch.Tensor], order: list[torch.Tensor]) -> torch.Tensor:
    """The groups' losses back in model order: (M,)."""
    if len(losses) == 1:
        return losses[0]
    return torch.cat(losses)[torch.argsort(torch.cat(order))]


def _groups(
    p: torch.Tensor, k: torch.Tensor, stream: torch.Tensor | None = None
) -> list[torch.Tensor]:
    """Indices of the models sharing one (data stream, p, k): the same inputs and targets."""
    streams = [0] * len(p) if stream is None else stream.tolist()
    groups: dict[tuple[int, float, int], list[int]] = {}
    for m, key in enumerate(zip(streams, p.tolist(), k.tolist(), strict=True)):
        groups.setdefault(key, []).append(m)
    return [torch.tensor(v) for v in groups.values()]


class SquaredError(torch.autograd.Function):
    """Per-model loss Σ_t Σ_i I_i (y − σ_y(z))², mean over the batch: (M,).

    Fused because these elementwise passes over (M, T, N_x, B) dominate the
    step time of small models: the backward is a single multiply by the
    error saved in the forward (already zeroed where the ReLU is off).
    """

    @staticmethod
    def forward(ctx, z, y, weights, relu):  # noqa: ANN001 - autograd signature
        m, batch = z.shape[0], z.shape[-1]
        y_hat = torch.relu(z) if relu else z
        err = y_hat - y  # (M, T, N_x, B), a fresh tensor: in-place from here on
        if weights is None:  # one fused pass for the sum of squares
            loss = torch.linalg.vector_norm(err.view(m, -1), dim=1).square() / batch  # (M,)
            werr = err
        else:
            werr = err * weights
            loss = (werr * err).sum(dim=(1, 2, 3)) / batch  # (M,)
        if relu:  # no gradient through an inactive readout; sign() is 4x faster than masking
            werr = werr.mul_(y_hat.sign_())
        ctx.save_for_backward(werr)
        ctx.batch = z.shape[-1]
        return loss

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001
        (werr,) = ctx.saved_tensors
        return werr * (grad * (2.0 / ctx.batch)).view(-1, 1, 1, 1), None, None, None


# ---- linear: a quadratic form in the kernel --------------------------------------------------


def lagged_gram(x: torch.Tensor, bias: bool) -> torch.Tensor:
    """(1/B) Σ_{t,b} φ_{t,b} φ_{t,b}ᵀ for x (T, N_x, B), in float64: (T·N_x [+1])².

    φ_{t,b} = (x_{t−s,j,b})_{s,j} (zero before the sequence starts), plus a
    constant 1 when `bias`. From the plain Gram G = x xᵀ over the batch:
    C_{(s,j),(s',j')} = Σ_{t ≥ max(s,s')} G_{(t−s,j),(t−s',j')}, a suffix sum
    along the diagonals of G with its time axes reversed, taken by doubling.
    """
    seq_len, n_x, batch = x.shape
    xd = x.double().reshape(seq_len * n_x, batch)
    gram = (xd @ xd.T).view(seq_len, n_x, seq_len, n_x) / batch  # G = x xᵀ / B
    rev = gram.flip(0, 2)  # G̃[u, u'] = G[T-1-u, T-1-u']
    # C[s, s'] = Σ_{v ≥ 0} G̃[s + v, s' + v]: shifts 1, 2, 4, … add the rest of each diagonal
    shift = 1
    while shift < seq_len:
        nxt = rev.clone()
        nxt[:-shift, :, :-shift] += rev[shift:, :, shift:]
        rev, shift = nxt, 2 * shift
    side = seq_len * n_x
    gram = rev.reshape(side, side)
    if not bias:
        return gram
    # E_b Σ_t φ_{t,(s,j)} = Σ_{r ≤ T-1-s} mean_b x_{r,j}
    mean = (xd.view(seq_len, n_x, batch).sum(-1) / batch).cumsum(0).flip(0).reshape(side)
    return _with_bias_row(gram, mean, seq_len)


def _residual_kernel(
    kernel: torch.Tensor, bias: torch.Tensor | None, k: int, dtype: torch.dtype
) -> torch.Tensor:
    """d_{m,i} = (A_{m,·,i,·} − e_{(k,i)}, b_{m,i}): (M, N_x(i), T·N_x [+1])."""
    m, seq_len, n_x, _ = kernel.shape
    d = kernel.to(dtype).permute(0, 2, 1, 3).reshape(m, n_x, seq_len * n_x)
    target = torch.zeros(n_x, seq_len * n_x, dtype=dtype)
    target[torch.arange(n_x), k * n_x + torch.arange(n_x)] = 1.0
    d = d - target
    if bias is not None:
        d = torch.cat([d, bias.to(dtype).unsqueeze(-1)], dim=-1)
    return d


def expected_lagged_gram(
    p: float, mu: float, nu: float, seq_len: int, n_x: int, bias: bool
) -> torch.Tensor:
    """E[`lagged_gram`] for inputs x = B·U, B ~ Bernoulli(p), E[U] = μ, E[U²] = ν: float64.

    Σ_t runs over the T − max(s, s') steps at which both lags exist; a pair of
    inputs is one input (E[x²] = pν) or two independent ones (E = p²μ²).
    """
    lag = torch.arange(seq_len, dtype=torch.float64)
    steps = seq_len - torch.maximum(lag.view(-1, 1), lag.view(1, -1))  # (T, T): T − max(s, s')
    same = torch.eye(seq_len * n_x, dtype=torch.float64).view(seq_len, n_x, seq_len, n_x)
    moment = p * nu * same + p * p * mu * mu * (1.0 - same)  # (T, N_x, T, N_x)
    side = seq_len * n_x
    gram = (moment * steps.view(seq_len, 1, seq_len, 1)).reshape(side, side)
    if not bias:
        return gram
    mean = (p * mu * (seq_len - lag)).repeat_interleave(n_x)  # (side,): Σ_t E x_{t-s,j}
    return _with_bias_row(gram, mean, seq_len)


def _with_bias_row(gram: torch.Tensor, mean: torch.Tensor, seq_len: int) -> torch.Tensor:
    """[[C, m], [mᵀ, T]]: the Gram matrix of the lagged inputs and a constant 1 per step."""
    side = gram.shape[0]
    out = gram.new_empty(side + 1, side + 1)
    out[:side, :side] = gram
    out[side, :side] = mean
    out[:side, side] = mean
    out[side, side] = seq_len
    return out


def quadratic_loss(
    kernel: Tensor, bias: Tensor | None, gram: Tensor, k: int, imp: Tensor
) -> Tensor:
    """Linear model: Σ_i I_i d_iᵀ C d_i per model (M,), from the kernel (M, T, N_x, N_x).

    `gram` is C, the batch's (`lagged_gram`) or its expectation, with the bias row when `bias`.
    """
    return _QuadraticLoss.apply(kernel, bias, gram, k, imp)


class _QuadraticLoss(torch.autograd.Function):
    """Σ_i I_i d_iᵀ C d_i with its gradient 2 I_i C d_i taken in the forward pass.

    C d is the forward's own product, so the gradient costs two element-wise ops;
    autograd through the float64 casts, the reshapes and the residual's subtraction
    cost more in per-op overhead (measured, 64 linear models: loss and backward
    1.29 → 1.12 ms of a 2.7 ms step).
    """

    @staticmethod
    def forward(ctx, kernel, bias, gram, k, imp):  # noqa: ANN001 - autograd signature
        m, seq_len, n_x, _ = kernel.shape
        d = _residual_kernel(kernel, bias, k, torch.float64)  # (M, N_x, side)
        cd = d @ gram  # C d_i (C symmetric)
        imp64 = imp.double()
        loss = ((cd * d).sum(-1) @ imp64).to(kernel.dtype)  # (M,)
        if any(ctx.needs_input_grad[:2]):
            grad_d = cd.mul_(imp64.view(1, n_x, 1) * 2.0)  # ∂L/∂d_i = 2 I_i C d_i
            side = seq_len * n_x
            grad_kernel = grad_d[..., :side].view(m, n_x, seq_len, n_x).transpose(1, 2)
            ctx.save_for_backward(
                grad_kernel.to(kernel.dtype),
                None if bias is None else grad_d[..., side].to(bias.dtype),
            )
        return loss

    @staticmethod
    def backward(ctx, grad_loss):  # noqa: ANN001
        grad_kernel, grad_bias = ctx.saved_tensors
        per_model = grad_loss.view(-1, 1, 1, 1)
        grad_bias = None if grad_bias is None else grad_bias * grad_loss.view(-1, 1)
        return grad_kernel * per_model, grad_bias, None, None, None


# ---- ReLU readout on a linear recurrence: one GEMM each way -----------------------------------


def lagged_inputs(x: torch.Tensor, bias: bool) -> torch.Tensor:
    """The Toeplitz matrix of x (T, N_x, B): rows (b, t), columns (q, j) = x_{t−s,j,b}, s = T−1−q.

    Shape (B·T, T·N_x [+1]); a last column of ones when `bias`. The lags run
    oldest first, as a sliding window yields them: the kernel is flipped to
    match, which costs T·N_x numbers per model instead of a copy of the data.
    """
    seq_len, n_x, batch = x.shape
    side = seq_len * n_x
    xb = x.permute(2, 0, 1)  # (B, T, N_x)
    padded = torch.cat([xb.new_zeros(batch, seq_len - 1, n_x), xb], dim=1)  # (B, 2T-1, N_x)
    win = padded.unfold(1, seq_len, 1)  # (B, T(t), N_x, T(q)): times t-T+1 … t
    out = x.new_empty(batch * seq_len, side + int(bias))
    out[:, :side].view(batch, seq_len, seq_len, n_x).copy_(win.permute(0, 1, 3, 2))
    if bias:
        out[:, side] = 1.0
    return out


def _relu_kernel_loss(
    kernel: Tensor, bias: Tensor | None, x: Tensor, k: int, imp: Tensor
) -> Tensor:
    """SSM: per-model loss (M,) of ŷ = ReLU(X a + b), from the kernel (M, T, N_x, N_x)."""
    m, seq_len, n_x, _ = kernel.shape
    # rows (m, i), columns (q, j) with the lag s = T-1-q, as `lagged_inputs` orders them
    a = kernel.flip(1).permute(0, 2, 1, 3).reshape(m * n_x, seq_len * n_x)
    if bias is not None:
        a = torch.cat([a, bias.reshape(m * n_x, 1)], dim=1)
    lagged = lagged_inputs(x, bias is not None)  # (B·T, side)
    if bias is None:  # before a sequence's first input ŷ = y = 0: those rows add nothing
        arrived = x.abs().sum(1).cumsum(0).T.reshape(-1)  # (B·T,), rows (b, t)
        lagged = lagged.index_select(0, torch.nonzero(arrived).squeeze(1))
    q = seq_len - 1 - k
    target = lagged[:, q * n_x : (q + 1) * n_x]  # (rows, N_x): y_t = x_{t-k}
    return _ReluKernelLoss.apply(a, lagged, target, imp, x.shape[-1])


class _ReluKernelLoss(torch.autograd.Function):
    """Σ_i I_i Σ_r (ReLU(Xa)_r − y_r)² / B per model, its gradient taken in the forward.

    a: (M·N_x, side) kernel rows; lagged X: (rows, side); target y: (rows, N_x).
    """

    @staticmethod
    def forward(ctx, a, lagged, target, weights, batch):  # noqa: ANN001 - autograd signature
        mn, n_x = a.shape[0], target.shape[1]
        m = mn // n_x
        y_hat = (lagged @ a.T).clamp_(min=0)  # (rows, M·N_x)
        rows = torch.nonzero(target.abs().sum(1)).squeeze(1)  # where some target ≠ 0
        y_hat_r = y_hat.index_select(0, rows).view(-1, m, n_x)  # (R, M, N_x)
        err_r = y_hat_r - target.index_select(0, rows).view(-1, 1, n_x)
        y_hat.index_fill_(0, rows, 0.0)  # elsewhere the target is 0: the error is ŷ itself
        sq = (y_hat * y_hat).sum(0).view(m, n_x) + err_r.square().sum(0)  # (M, N_x)
        loss = sq @ weights / batch  # (M,)
        if ctx.needs_input_grad[0]:
            # ŷ (zero on the target rows) is its own masked error; on them mask by ReLU
            g_r = _masked(err_r, y_hat_r).view(-1, mn)  # (R, M·N_x)
            grad = lagged.T @ y_hat + lagged.index_select(0, rows).T @ g_r  # (side, M·N_x)
            scale = (2.0 / batch) * weights.repeat(m).view(mn, 1)
            ctx.save_for_backward(grad.T * scale)
        ctx.n_x = n_x
        return loss

    @staticmethod
    def backward(ctx, grad_loss):  # noqa: ANN001
        (grad,) = ctx.saved_tensors
        per_row = grad_loss.repeat_interleave(ctx.n_x).view(-1, 1)
        return grad * per_row, None, None, None, None


# ---- the time loop: a hand-written backward through time ----------------------------------------


def recurrent_loss(model: BatchedRNN, x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Per-model loss (M,) by the time loop, any model; x (1 or M, T, N_x, B)."""
    if fused.applies(model.W_x, x):  # compiled, where it builds (tempsup.training.fused)
        # W_y is None when tied: the compiled loop computes W_y = w_k itself
        args = (model.W_x, model.W_h, model.W_y, model.b_y, x, model.k, weights)
        return fused.recurrent_loss(*args, model.relu_hidden, model.relu_readout)
    y = _delayed(x, model.k)  # (T, M or 1, N_x, B)
    # time-major and contiguous: the gradient's products over every t run 3x faster
    # on a contiguous copy than on the strided view (per-model inputs: a few MB)
    xt = x.transpose(0, 1)
    return _RecurrentLoss.apply(
        model.W_x,
        model.W_h,
        model.readout(),
        model.b_y,
        xt if x.shape[0] == 1 else xt.contiguous(),
        y,
        weights,
        model.relu_hidden,
        model.relu_readout,
    )


def _delayed(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Targets y_t = x_{t−k} (zero for t < k) in the time-major layout (T, M or 1, N_x, B)."""
    xt = x.transpose(0, 1)  # (T, M', N_x, B)
    seq_len = xt.shape[0]
    ks = k.tolist()
    if all(kk == ks[0] for kk in ks):
        return torch.cat([xt.new_zeros(ks[0], *xt.shape[1:]), xt[: seq_len - ks[0]]])
    y = xt.new_zeros(seq_len, len(ks), *xt.shape[2:])
    for m, kk in enumerate(ks):
        y[kk:, m] = xt[: seq_len - kk, 0 if xt.shape[1] == 1 else m]
    return y


class _RecurrentLoss(torch.autograd.Function):
    """h_t = W_x x_t + W_h σ_h(h_{t−1}), ŷ_t = σ_y(W_yᵀ h_t + b): loss (M,), gradients at once.

    Backward through time: δ_t = W_y g_t + σ_h'(h_t) ⊙ W_hᵀ δ_{t+1} with g_t the
    masked, weighted error; then dW_x = Σ_t δ_t x_tᵀ, dW_h = Σ_t δ_t σ_h(h_{t−1})ᵀ,
    dW_y = Σ_t h_t g_tᵀ, db = Σ_t g_t.
    """

    @staticmethod
    def forward(ctx, w_x, w_h, w_y, b, xt, y, weights, relu_hidden, relu_readout):  # noqa: ANN001, PLR0913
        seq_len, _, n_x, batch = xt.shape
        m, n_h = w_h.shape[0], w_h.shape[1]
        shared = xt.shape[1] == 1  # one input stream for every model
        h = w_h.new_empty(seq_len, m, n_h, batch)  # h_t; σ_h(h_t) in `act`
        act = torch.empty_like(h) if relu_hidden else h
        w_x_flat = w_x.reshape(m * n_h, n_x)
        hs, acts, xs = h.unbind(0), act.unbind(0), xt.unbind(0)  # views per t, taken once
        # the readout of each h_t while it is in cache (after the loop: 2x the time)
        y_hat = h.new_empty(seq_len, m, n_x, batch)
        y_hats, w_y_t = y_hat.unbind(0), w_y.transpose(1, 2).contiguous()
        for t in range(seq_len):
            if n_x == 1:  # an outer product per model: one broadcast multiply (mm: 1.6x slower)
                torch.mul(w_x, xs[t], out=hs[t])
            elif shared:  # W_x x_t: (M·N_h, N_x) @ (N_x, B)
                torch.mm(w_x_flat, xs[t][0], out=hs[t].view(m * n_h, batch))
            else:
                torch.bmm(w_x, xs[t], out=hs[t])
            if t > 0:
                hs[t].baddbmm_(w_h, acts[t - 1])
            if relu_hidden:
                torch.clamp(hs[t], min=0, out=acts[t])
            torch.bmm(w_y_t, hs[t], out=y_hats[t])  # (M, N_x, B)
        if b is not None:
            y_hat += b.view(1, m, n_x, 1)
        if relu_readout:
            y_hat.clamp_(min=0)
        err = y_hat - y
        need_grad = any(ctx.needs_input_grad[:4])
        w = weights.view(1, 1, n_x, 1)
        sq = err * err if n_x == 1 else err.square() * w  # (a strided norm is 3x slower)
        loss = sq.sum(dim=(0, 2, 3)) / batch
        if need_grad:
            g = err.mul_(w) if n_x > 1 else err  # (T, M, N_x, B); I_0 = 1
            if relu_readout:  # no gradient where ŷ = 0
                g = _masked(g, y_hat)
            grad_y = torch.matmul(h, g.transpose(-1, -2)).sum(0)
            # δ_t = ∂L/∂h_t overwrites h_t, no longer needed (σ_h(h) has its own buffer): a
            # smaller working set
            delta = h if relu_hidden else torch.empty_like(h)
            deltas, gs = delta.unbind(0), g.unbind(0)
            torch.bmm(w_y, gs[-1], out=deltas[-1])
            w_h_t = w_h.transpose(1, 2).contiguous()  # a strided batch is twice as slow
            for t in range(seq_len - 2, -1, -1):  # all in place in δ_t: one buffer stays hot
                d = torch.bmm(w_h_t, deltas[t + 1], out=deltas[t])
                if relu_hidden:
                    torch.ops.aten.threshold_backward.grad_input(d, acts[t], 0, grad_input=d)
                if n_x == 1:  # W_y g_t is an outer product: one fused pass
                    d.addcmul_(w_y, gs[t])
                else:
                    d.baddbmm_(w_y, gs[t])
            scale = 2.0 / batch
            if shared:  # (M·N_h, B) @ (B, N_x) for every t
                grad_x = torch.matmul(delta.view(seq_len, m * n_h, batch), xt[:, 0].transpose(1, 2))
                grad_x = grad_x.sum(0).view(m, n_h, n_x)
            else:
                grad_x = torch.matmul(delta, xt.transpose(-1, -2)).sum(0)
            grads = (
                grad_x * scale,  # (M, N_h, N_x)
                torch.matmul(delta[1:], act[:-1].transpose(-1, -2)).sum(0) * scale,
                grad_y * scale,
                None if b is None else g.sum(dim=(0, 3)) * scale,  # (M, N_x)
            )
            ctx.save_for_backward(*grads)
        return loss

    @staticmethod
    def backward(ctx, grad_loss):  # noqa: ANN001
        return fused.per_model_gradients(ctx.saved_tensors, grad_loss)


def _masked(grad: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """grad where a ReLU's output `out` is positive, else 0: one fused pass.

    (Comparisons and sign() are several times slower than arithmetic here.)
    """
    return torch.ops.aten.threshold_backward(grad, out, 0)
