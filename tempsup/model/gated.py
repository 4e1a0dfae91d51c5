"""Gated and selective recurrences, M models batched along a leading axis.

    gru        torch.nn.GRU's equations (one layer, gates r, z, n)
    lstm       torch.nn.LSTM's equations (one layer, gates i, f, g, o); state s = (h, c)
    lru        complex diagonal λ = exp(−exp(ν) + i·exp(θ)), h' = λ h + γ (B x), γ = √(1−|λ|²)
    selective  diagonal SSM, Δ = softplus(w·x + b), h' = exp(Δ A) h + Δ B x, A = −exp(A_log)

All have the SSM's ReLU readout ŷ = ReLU(W_yᵀ observe(s) + b_y). Parameters sit in
torch's layout with a leading model axis, so torch's own modules map onto them one to
one (`tempsup.io.imported`). `step` is pure and dtype-agnostic: the lens linearises it
in float64 (`tempsup.model.linearize`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from tempsup.errors import TempsupError

GATED: tuple[str, ...] = ("gru", "lstm", "lru", "selective")
# (model, x, target or None for recall's, weights) -> `gated_loss` (M,), or None where it
# does not apply
FusedLoss = Callable[
    ["GatedRNN", torch.Tensor, "torch.Tensor | None", torch.Tensor], "torch.Tensor | None"
]
GATES = {"gru": 3, "lstm": 4}


def state_size(model: str, hidden: int) -> int:
    """The recurrent state's width: the LSTM carries (h, c)."""
    return 2 * hidden if model == "lstm" else hidden


def check_model_shape(model: str, hidden: int) -> None:
    """The LRU's real state holds N_h/2 complex modes."""
    if model == "lru" and hidden % 2:
        raise TempsupError(
            f"hidden: the lru needs an even hidden size (N_h/2 complex modes), got {hidden}"
        )


def _uniform(g: torch.Generator, shape: tuple[int, ...], bound: float) -> torch.Tensor:
    return (torch.rand(shape, generator=g) * 2 - 1) * bound


def _init_one(model: str, hidden: int, inputs: int, g: torch.Generator) -> dict[str, torch.Tensor]:
    if model in GATES:  # torch's init: U(−1/√N_h, 1/√N_h) for every weight and bias
        n, bound = GATES[model] * hidden, 1.0 / math.sqrt(hidden)
        return {
            "weight_ih": _uniform(g, (n, inputs), bound),
            "weight_hh": _uniform(g, (n, hidden), bound),
            "bias_ih": _uniform(g, (n,), bound),
            "bias_hh": _uniform(g, (n,), bound),
        }
    if model == "lru":  # ring init: |λ| ~ U(0.4, 0.9), arg λ ~ U(0, π)
        modes = hidden // 2
        r = 0.4 + 0.5 * torch.rand(modes, generator=g)
        phase = math.pi * torch.rand(modes, generator=g).clamp(min=1e-3)
        scale = 1.0 / math.sqrt(2 * inputs)
        return {
            "nu_log": torch.log(-torch.log(r)),
            "theta_log": torch.log(phase),
            "B_re": torch.randn(modes, inputs, generator=g) * scale,
            "B_im": torch.randn(modes, inputs, generator=g) * scale,
        }
    if model == "selective":  # at Δ ≈ 1 each mode keeps exp(A) ~ U(0.4, 0.9) per step
        keep = 0.4 + 0.5 * torch.rand(hidden, generator=g)
        return {
            "A_log": torch.log(-torch.log(keep)),
            "B": torch.randn(hidden, inputs, generator=g),
            "w": torch.randn(inputs, generator=g),
            "b": torch.tensor([math.log(math.e - 1.0)]),  # softplus(b) = 1
        }
    raise TempsupError(f"model: expected one of {', '.join(GATED)}, got {model!r}")


def init_params(model: str, hidden: int, inputs: int, seeds: list[int]) -> dict[str, torch.Tensor]:
    """Each model's parameters from its own seed, stacked on a leading model axis."""
    check_model_shape(model, hidden)
    ones = [_init_one(model, hidden, inputs, torch.Generator().manual_seed(int(s))) for s in seeds]
    return {n: torch.stack([p[n] for p in ones]) for n in ones[0]}


def _gate_inputs(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """W_ih x + b_ih: (M, G·N_h, B) for x (M or 1, N_x, B)."""
    w = params["weight_ih"]
    return torch.matmul(w, x) + params["bias_ih"].unsqueeze(-1)


def _gru(params: dict[str, torch.Tensor], gi: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    n_h = h.shape[1]
    gh = torch.baddbmm(params["bias_hh"].unsqueeze(-1), params["weight_hh"], h)
    rz = torch.sigmoid(gi[:, : 2 * n_h] + gh[:, : 2 * n_h])
    r, z = rz[:, :n_h], rz[:, n_h:]
    n = torch.tanh(gi[:, 2 * n_h :] + r * gh[:, 2 * n_h :])
    return n + z * (h - n)


def _lstm(params: dict[str, torch.Tensor], gi: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    n_h = s.shape[1] // 2
    h, c = s[:, :n_h], s[:, n_h:]
    g = gi + torch.baddbmm(params["bias_hh"].unsqueeze(-1), params["weight_hh"], h)
    i, f = torch.sigmoid(g[:, :n_h]), torch.sigmoid(g[:, n_h : 2 * n_h])
    cand, o = torch.tanh(g[:, 2 * n_h : 3 * n_h]), torch.sigmoid(g[:, 3 * n_h :])
    c = f * c + i * cand
    return torch.cat([o * torch.tanh(c), c], dim=1)


def lru_eigenvalues(params: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(Re λ, Im λ) of every mode: (M, N_h/2) each."""
    modulus = torch.exp(-torch.exp(params["nu_log"]))
    phase = torch.exp(params["theta_log"])
    return modulus * torch.cos(phase), modulus * torch.sin(phase)


def lru_real_weights(params: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The LRU as a real linear recurrence h' = W_h h + W_x x in its state layout ([Re, Im]
    per mode): W_h block-diagonal [[Re λ, −Im λ], [Im λ, Re λ]], W_x the rows γ B_re, γ B_im;
    (M, N_h, N_x) and (M, N_h, N_h), differentiable in the parameters. The SSM's compiled
    time loop trains it in this form (`tempsup.training.fused.gated`)."""
    re, im = lru_eigenvalues(params)  # (M, modes)
    gamma = torch.sqrt((1.0 - re * re - im * im).clamp(min=0.0)).unsqueeze(-1)
    w_x = torch.stack([gamma * params["B_re"], gamma * params["B_im"]], dim=2).flatten(1, 2)
    block = torch.stack([torch.stack([re, -im], -1), torch.stack([im, re], -1)], -2)
    m, modes = re.shape
    eye = torch.eye(modes, dtype=re.dtype)
    w_h = torch.einsum("jl,mjab->mjalb", eye, block).reshape(m, 2 * modes, 2 * modes)
    return w_x, w_h


def _lru(params: dict[str, torch.Tensor], s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    m, n_h, b = s.shape
    re, im = lru_eigenvalues(params)
    gamma = torch.sqrt((1.0 - re * re - im * im).clamp(min=0.0)).unsqueeze(-1)  # (M, modes, 1)
    h = s.view(m, n_h // 2, 2, b)
    hr, hi = h[:, :, 0], h[:, :, 1]
    ur = gamma * torch.matmul(params["B_re"], x)
    ui = gamma * torch.matmul(params["B_im"], x)
    lr, li = re.unsqueeze(-1), im.unsqueeze(-1)
    new = torch.stack([lr * hr - li * hi + ur, lr * hi + li * hr + ui], dim=2)
    return new.view(m, n_h, b)


def _selective(params: dict[str, torch.Tensor], s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # Δ (M, 1, B): one step size per model and sample, from the current input
    delta = nn.functional.softplus(
        torch.matmul(params["w"].unsqueeze(1), x) + params["b"].view(-1, 1, 1)
    )
    a = -torch.exp(params["A_log"]).unsqueeze(-1)  # (M, N_h, 1)
    return torch.exp(delta * a) * s + delta * torch.matmul(params["B"], x)


def step(
    model: str, params: dict[str, torch.Tensor], state: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """One time step of M models: state (M, S, B), x (M or 1, N_x, B) -> (M, S, B)."""
    if model == "gru":
        return _gru(params, _gate_inputs(params, x), state)
    if model == "lstm":
        return _lstm(params, _gate_inputs(params, x), state)
    if model == "lru":
        return _lru(params, state, x)
    if model == "selective":
        return _selective(params, state, x)
    raise TempsupError(f"model: expected one of {', '.join(GATED)}, got {model!r}")


def observe(model: str, state: torch.Tensor, hidden: int) -> torch.Tensor:
    """What the readout reads of a state (..., S, B): the LSTM's h, every other state whole."""
    return state[..., :hidden, :] if model == "lstm" else state


class GatedRNN(nn.Module):
    """M independent gated (or selective) models with ReLU readouts, trained as one module."""

    def __init__(
        self,
        model: str,
        n_models: int,
        hidden: int,
        inputs: int,
        k: torch.Tensor,
        tied: bool,
        bias: bool,
        seeds: list[int],
        seq_len: int = 20,
        outputs: int | None = None,
        fused_loss: FusedLoss | None = None,
    ) -> None:
        """`seq_len`: the silent run's length, the run's T (the lens's silent state).
        `fused_loss`: a faster `gated_loss` with the same numbers (a compiled time loop),
        which the training room supplies (`tempsup.training.fused.gated.loss`); None, or
        a None from it, computes the loss here, step by step."""
        super().__init__()
        self.fused_loss = fused_loss
        assert model in GATED, model
        assert len(seeds) == n_models and k.shape == (n_models,), (len(seeds), k.shape)
        self.model, self.hidden, self.inputs, self.tied = model, hidden, inputs, tied
        self.seq_len = seq_len
        # the readout's width: N_x, or a task's n_out (tempsup.model.tasks); `inputs` are
        # the input channels (a cued task's cue channels included)
        self.n_out = inputs if outputs is None else outputs
        assert not (tied and self.n_out != inputs), "a tied readout has one output per input"
        self.register_buffer("k", k.long(), persistent=False)
        self._names = []
        for name, value in init_params(model, hidden, inputs, seeds).items():
            setattr(self, name, nn.Parameter(value))
            self._names.append(name)
        w_y = []
        for s in seeds:
            g = torch.Generator().manual_seed(int(s) + 104_729)
            w_y.append(torch.randn(hidden, self.n_out, generator=g) / math.sqrt(hidden))
        self.W_y = None if tied else nn.Parameter(torch.stack(w_y))  # (M, N_h, n_out)
        self.b_y = nn.Parameter(torch.zeros(n_models, self.n_out)) if bias else None

    @property
    def n_models(self) -> int:
        return int(self.k.shape[0])

    def params(self) -> dict[str, torch.Tensor]:
        """The recurrence's parameters (for `step`), readout excluded."""
        return {n: getattr(self, n) for n in self._names}

    def readout(self) -> torch.Tensor:
        """The effective W_y (M, N_h, N_x); tied: the direction of age k at rest, w_k =
        observe(J_h^k J_x) at the silent state (differentiable: autograd through the
        Jacobian-vector products)."""
        if not self.tied:
            return self.W_y
        args = (self.model, self.params(), self.k, self.hidden, self.inputs, self.seq_len)
        return tied_readout(*args)

    def bias(self) -> torch.Tensor:
        if self.b_y is None:
            return self.k.new_zeros(self.n_models, self.n_out, dtype=torch.float32)
        return self.b_y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """ŷ (M, T, N_x, B) for inputs x (M or 1, T, N_x, B)."""
        return torch.relu(self.preactivation(x))

    def preactivation(self, x: torch.Tensor) -> torch.Tensor:
        """W_yᵀ observe(s_t) + b_y (M, T, N_x, B), from s = 0 before the first step."""
        states = observe(self.model, self.states(x), self.hidden)  # (M, T, N_h, B)
        m, seq_len, n_h, batch = states.shape
        w_y_t = self.readout().transpose(1, 2)  # (M, N_x, N_h)
        # one product for every step: (M, N_x, N_h) @ (M, N_h, T·B)
        flat = states.permute(0, 2, 1, 3).reshape(m, n_h, seq_len * batch)
        z = torch.bmm(w_y_t, flat).view(m, -1, seq_len, batch).transpose(1, 2)
        if self.b_y is not None:
            z = z + self.b_y.view(self.n_models, 1, -1, 1)
        return z

    def states(self, x: torch.Tensor) -> torch.Tensor:
        """The state after every step, (M, T, S, B), for inputs x (M or 1, T, N_x, B).

        The same function as iterating `step`, arranged for speed: what depends on the
        input alone (the gates' input side; the LRU's and the selective SSM's drive and
        decay) is computed for every step at once, so the time loop holds only the
        recurrence (`unbind`, not indexing: each index's backward would allocate a
        full-size gradient)."""
        params, m = self.params(), self.n_models
        batch = x.shape[-1]
        n_s = state_size(self.model, self.hidden)
        if self.model in GATES:
            w = params["weight_ih"]  # (M, G·N_h, N_x)
            gates = torch.matmul(w.unsqueeze(1), x) + params["bias_ih"][:, None, :, None]
            cell = _gru if self.model == "gru" else _lstm
            s = x.new_zeros(m, n_s, batch)
            out = []
            for g in gates.unbind(1):
                s = cell(params, g, s)
                out.append(s)
            return torch.stack(out, dim=1)
        if self.model == "lru":
            re, im = lru_eigenvalues(params)  # (M, modes)
            lam = torch.complex(re, im).unsqueeze(-1)  # (M, modes, 1)
            gamma = torch.sqrt((1.0 - re * re - im * im).clamp(min=0.0))[:, None, :, None]
            b = torch.complex(params["B_re"], params["B_im"]).unsqueeze(1)  # (M, 1, modes, N_x)
            drive = gamma * torch.matmul(b, x.to(b.dtype))  # (M, T, modes, B)
            h = torch.zeros_like(drive[:, 0])
            out = []
            for u in drive.unbind(1):
                h = lam * h + u
                out.append(h)
            hs = torch.view_as_real(torch.stack(out, dim=1))  # (M, T, modes, B, 2)
            return hs.transpose(-1, -2).reshape(m, x.shape[1], n_s, batch)
        # selective: Δ_t, the decay exp(Δ_t A) and the drive Δ_t B x_t for every step
        delta = nn.functional.softplus(
            torch.matmul(params["w"][:, None, None, :], x) + params["b"].view(-1, 1, 1, 1)
        )  # (M, T, 1, B)
        decay = torch.exp(delta * -torch.exp(params["A_log"])[:, None, :, None])
        drive = delta * torch.matmul(params["B"].unsqueeze(1), x)  # (M, T, N_h, B)
        h = torch.zeros_like(drive[:, 0])
        out = []
        for a, u in zip(decay.unbind(1), drive.unbind(1), strict=True):
            h = a * h + u
            out.append(h)
        return torch.stack(out, dim=1)

    @torch.no_grad()
    def load_weights(
        self, weights: dict[str, torch.Tensor], noise: float, seeds: list[int], exact: list[bool]
    ) -> None:
        """Warm start: copy weights (the recurrence's by name, W_y, b_y) into every model;
        models not `exact` get Gaussian noise of relative size `noise` from their own seed."""
        for name in (*self._names, "W_y", "b_y"):
            param = getattr(self, name)
            if param is None or name not in weights:
                continue
            src = torch.as_tensor(weights[name], dtype=param.dtype)
            try:
                src = src.expand_as(param).clone()
            except RuntimeError:
                raise TempsupError(
                    f"warm_start: {name} has shape {tuple(src.shape)}, this config needs "
                    f"{tuple(param.shape[1:])} (model, hidden and inputs must match)"
                ) from None
            scale = noise * src.abs().mean()
            for m, (seed, keep) in enumerate(zip(seeds, exact, strict=True)):
                if not keep:
                    g = torch.Generator().manual_seed(int(seed) + 99_991)
                    src[m] += torch.randn(param.shape[1:], generator=g) * scale
            param.copy_(src)


def tied_readout(
    model: str,
    params: dict[str, torch.Tensor],
    k: torch.Tensor,
    hidden: int,
    inputs: int,
    seq_len: int,
) -> torch.Tensor:
    """w_k = observe(J_h^k J_x) at the silent state, per model (M, N_h, N_x), differentiable
    in the parameters. The LRU and the selective SSM are linear in h with the silent state
    0, so w_k has a closed form (`_linear_tied`); the GRU and the LSTM reach their silent
    state by `seq_len` silent steps and take their Jacobians there in closed form
    (`gate_jacobians`; autograd's forward mode through `step` cost 5× the whole step)."""
    if model in ("lru", "selective"):
        return _linear_tied(model, params, k)
    m = int(k.shape[0])
    n_s = state_size(model, hidden)
    dtype = next(iter(params.values())).dtype
    zero_x = torch.zeros(m, inputs, 1, dtype=dtype)
    rest = torch.zeros(m, n_s, 1, dtype=dtype)
    for _ in range(seq_len):  # the silent state moves with the parameters: its gradient is kept
        rest = step(model, params, rest, zero_x)
    j_h, j_x = gate_jacobians(model, params, rest[..., 0])
    ks = k.tolist()
    w, by_age = j_x, {}
    for age in range(max(ks) + 1):
        if age:
            w = torch.bmm(j_h, w)
        by_age[age] = w
    w_k = torch.stack([by_age[kk][i] for i, kk in enumerate(ks)])  # (M, S, N_x)
    return observe(model, w_k, hidden)


def gate_jacobians(
    model: str, params: dict[str, torch.Tensor], s: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """J_h (M, S, S) and J_x (M, S, N_x) of the GRU's or the LSTM's step at state s (M, S)
    and x = 0, by the chain rule through torch's gate equations."""
    w_i, w_h = params["weight_ih"], params["weight_hh"]  # (M, G·N_h, N_x), (M, G·N_h, N_h)
    n_h = w_h.shape[-1]
    h = s[:, :n_h]
    pre = params["bias_ih"] + params["bias_hh"] + torch.bmm(w_h, h.unsqueeze(-1))[..., 0]

    def rows(w: torch.Tensor, gate: int) -> torch.Tensor:
        return w[:, gate * n_h : (gate + 1) * n_h]

    def diag(v: torch.Tensor) -> torch.Tensor:
        return v.unsqueeze(-1)  # scales the rows of what it multiplies

    if model == "gru":
        gh_n = (
            rows(params["bias_hh"].unsqueeze(-1), 2)[..., 0]
            + torch.bmm(rows(w_h, 2), h.unsqueeze(-1))[..., 0]
        )
        r = torch.sigmoid(pre[:, :n_h])
        z = torch.sigmoid(pre[:, n_h : 2 * n_h])
        n = torch.tanh(rows(params["bias_ih"].unsqueeze(-1), 2)[..., 0] + r * gh_n)

        def through(w: torch.Tensor, own: torch.Tensor) -> torch.Tensor:
            """∂h'/∂(input of the gates via w); `own` adds ∂h'/∂h's direct z ⊙ h term."""
            d_r = diag(r * (1 - r)) * rows(w, 0)
            d_z = diag(z * (1 - z)) * rows(w, 1)
            inner = diag(gh_n) * d_r + (diag(r) * rows(w, 2) if w is w_h else 0)
            if w is w_i:
                inner = inner + rows(w, 2)
            d_n = diag(1 - n * n) * inner
            return diag(1 - z) * d_n + diag(h - n) * d_z + own

        eye = torch.eye(n_h, dtype=s.dtype).expand_as(w_h[:, :n_h])
        return through(w_h, diag(z) * eye), through(w_i, 0)
    # lstm: s = (h, c)
    c = s[:, n_h:]
    i, f = torch.sigmoid(pre[:, :n_h]), torch.sigmoid(pre[:, n_h : 2 * n_h])
    g, o = torch.tanh(pre[:, 2 * n_h : 3 * n_h]), torch.sigmoid(pre[:, 3 * n_h :])
    c_new = f * c + i * g
    t = torch.tanh(c_new)

    def d_c(w: torch.Tensor) -> torch.Tensor:
        d_i = diag(i * (1 - i)) * rows(w, 0)
        d_f = diag(f * (1 - f)) * rows(w, 1)
        d_g = diag(1 - g * g) * rows(w, 2)
        return diag(c) * d_f + diag(g) * d_i + diag(i) * d_g

    def d_h(w: torch.Tensor, dc: torch.Tensor) -> torch.Tensor:
        return diag(t * o * (1 - o)) * rows(w, 3) + diag(o * (1 - t * t)) * dc

    dc_dh, dc_dx = d_c(w_h), d_c(w_i)
    dc_dc = torch.diag_embed(f)
    top = torch.cat([d_h(w_h, dc_dh), diag(o * (1 - t * t)) * dc_dc], dim=2)
    bottom = torch.cat([dc_dh, dc_dc], dim=2)
    j_h = torch.cat([top, bottom], dim=1)  # (M, 2N_h, 2N_h): rows (h', c'), columns (h, c)
    j_x = torch.cat([d_h(w_i, dc_dx), dc_dx], dim=1)  # (M, 2N_h, N_x)
    return j_h, j_x


def _linear_tied(model: str, params: dict[str, torch.Tensor], k: torch.Tensor) -> torch.Tensor:
    """w_k of the models linear in h, at h* = 0: the LRU's λ^k γ B (complex modes laid out
    [Re, Im] per mode) and the selective SSM's exp(k Δ_0 A) Δ_0 B with Δ_0 = softplus(b)."""
    kk = k.to(next(iter(params.values())).dtype).view(-1, 1, 1)  # (M, 1, 1)
    if model == "lru":
        re, im = lru_eigenvalues(params)  # (M, modes)
        gamma = torch.sqrt((1.0 - re * re - im * im).clamp(min=0.0)).unsqueeze(-1)
        modulus = torch.sqrt(re * re + im * im).unsqueeze(-1) ** kk
        phase = torch.exp(params["theta_log"]).unsqueeze(-1) * kk  # k·arg λ
        c, s_ = modulus * torch.cos(phase) * gamma, modulus * torch.sin(phase) * gamma
        b_re, b_im = params["B_re"], params["B_im"]  # (M, modes, N_x)
        w_re, w_im = c * b_re - s_ * b_im, c * b_im + s_ * b_re
        return torch.stack([w_re, w_im], dim=2).flatten(1, 2)  # (M, N_h, N_x)
    delta0 = nn.functional.softplus(params["b"]).view(-1, 1, 1)
    decay = torch.exp(kk * delta0 * -torch.exp(params["A_log"]).unsqueeze(-1))  # (M, N_h, 1)
    return decay * delta0 * params["B"]


def gated_loss(
    model: GatedRNN, x: torch.Tensor, weights: torch.Tensor, target: torch.Tensor | None = None
) -> torch.Tensor:
    """Per-model loss (M,): Σ_t Σ_i I_i (ŷ_t,i − y_t,i)², batch mean; x (1 or M, T, N_in, B).

    The target y is recall's, x_{t−k}, unless given: `target` (1 or M, T, n_out, B), a
    task's (`tempsup.model.tasks.targets`), with `weights` (n_out,) per output."""
    if model.fused_loss is not None:  # a compiled time loop, where it takes these tensors
        fused = model.fused_loss(model, x, target, weights)
        if fused is not None:
            return fused
    if target is None:
        target = recall_target(model.k, x)
    y_hat = model(x)  # (M, T, n_out, B)
    err = (y_hat - target) ** 2 * weights.view(1, 1, -1, 1)
    return err.sum(dim=(1, 2, 3)) / x.shape[-1]


def recall_target(k: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x_{t−k} (M, T, N_x, B) for each model's delay k (M,), 0 before the sequence."""
    seq_len = x.shape[1]
    target = x.new_zeros((k.shape[0], *x.shape[1:]))
    ks = k.tolist()
    for kk in sorted(set(ks)):
        rows = [i for i, v in enumerate(ks) if v == kk]
        src = x[rows] if x.shape[0] > 1 else x.expand(len(rows), -1, -1, -1)
        target[rows, kk:] = src[:, : seq_len - kk]
    return target
