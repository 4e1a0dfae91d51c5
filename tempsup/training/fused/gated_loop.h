/* The GRU's and the LSTM's training loss, fused: forward and back through time in one call.
 *
 *     GRU   gi = W_ih x_t + b_ih, gh = W_hh h + b_hh (rows r, z, n); r, z = σ(gi + gh)
 *           n = tanh(gi_n + r gh_n);  h' = n + z (h − n)
 *     LSTM  g = W_ih x_t + b_ih + W_hh h + b_hh (rows i, f, g, o);
 *           c' = σ(g_f) c + σ(g_i) tanh(g_g);  h' = σ(g_o) tanh(c');  state s = (h, c)
 *     ŷ_t = ReLU(W_yᵀ h_t + b_y),   L_m = (1/B) Σ_b Σ_t Σ_o I_o (ŷ_{t,o} − y_{t,o})²
 *
 * torch.nn.GRU's and torch.nn.LSTM's equations with tempsup's ReLU readout, for M models
 * at once, against any target y the caller gives (the task decides it). PyTorch's
 * version (tempsup/model/gated.py, `gated_loss`) makes a dozen passes over (M, G·N_h, B)
 * tensors per time step and keeps every step's gates for its backward pass; here a tile
 * of batch columns runs through every t forward and back with its states in cache, for
 * the same numbers up to float rounding (tests/test_fused_gated.py).
 *
 * The backward pass recomputes each step's gates from the tile's saved states (cheaper
 * than keeping them). σ and tanh use one exponential, `fast_exp`: a polynomial the
 * compiler vectorizes (libm's expf is a call per number), relative error ~2e-7.
 *
 * Entry point tempsup_gated_loss_f32 (float32, contiguous arrays):
 *   dims  int64[8]: T, M, N_h, N_x, N_out, B, kind (0 GRU, 1 LSTM),
 *         flags (1: a readout bias, 2: compute the gradients, 4: x shared by every
 *         model (its leading axis 1), 8: y shared likewise)
 *   wih (M, G·N_h, N_x), bih (M, G·N_h), whh (M, G·N_h, N_h), bhh (M, G·N_h),
 *   wy (M, N_h, N_out), by (M, N_out) or NULL, x (M or 1, T, N_x, B),
 *   y (M or 1, T, N_out, B), imp (N_out): read only
 *   loss (M) and, with flag 2, gwih, gbih, gwhh, gbhh, gwy, gby like their weights:
 *   written, the gradients of Σ_m L_m (the sums over the batch in double).
 * Return 0, or 1 when scratch memory cannot be allocated. Single-threaded.
 */

#include <math.h>
#include <string.h>

/* batch columns per tile of the gated loop */
#define GTILE 64
#define INLINE static inline

/* exp(x) for |x| <= 87: 2^n · p(r), x = n ln 2 + r, |r| <= ln2/2 (Cephes' expf
 * polynomial), 2^n built in the exponent bits; branch-free so that loops vectorize. */
INLINE float fast_exp(float x) {
    x = x < -87.0f ? -87.0f : (x > 87.0f ? 87.0f : x);
    const float magic = 12582912.0f; /* 1.5 · 2^23: adding it rounds to an integer */
    float t = x * 1.44269504088896341f + magic;
    float n = t - magic;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits - 0x4B400000 + 127) << 23; /* the integer n, biased, in the exponent */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

INLINE float sigm(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

INLINE float tanh_(float x) { return 1.0f - 2.0f / (1.0f + fast_exp(2.0f * x)); }

/* Load rows × nb columns of a (rows, B) block at column b0 into a (rows, GTILE) tile,
 * zero beyond nb. */
INLINE void load_tile(float *restrict dst, const float *restrict src, int64_t rows, int64_t B,
                      int64_t b0, int64_t nb) {
    for (int64_t r = 0; r < rows; r++) {
        float *d = dst + r * GTILE;
        const float *s = src + r * B + b0;
        for (int64_t j = 0; j < nb; j++) d[j] = s[j];
        for (int64_t j = nb; j < GTILE; j++) d[j] = 0.0f;
    }
}

/* out = b + W v for one tile: out (rows, GTILE), W (rows, cols), v (cols, GTILE): the
 * gates' input side (v = x_t) and hidden side (v = h). */
INLINE void affine(float *restrict out, const float *restrict w, const float *restrict b,
                   const float *restrict v, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        float acc[GTILE];
        for (int j = 0; j < GTILE; j++) acc[j] = b[r];
        for (int64_t l = 0; l < cols; l++) {
            const float wl = w[r * cols + l];
            for (int j = 0; j < GTILE; j++) acc[j] += wl * v[l * GTILE + j];
        }
        memcpy(out + r * GTILE, acc, sizeof acc);
    }
}

/* One step of one tile: the new state `out` from the state `s` (both (S, GTILE)), the
 * input side `gi` and the hidden side `gh` ((G·N_h, GTILE)); `act` keeps the gates'
 * activations (G·N_h, GTILE) for the backward pass. */
INLINE void cell_step(float *restrict out, float *restrict act, const float *restrict s,
                      const float *restrict gi, const float *restrict gh, int64_t nh, int lstm) {
    const int64_t n = nh * GTILE;
    if (!lstm) {
        for (int64_t q = 0; q < 2 * n; q++) act[q] = sigm(gi[q] + gh[q]);
        for (int64_t q = 0; q < n; q++) {
            const float cand = tanh_(gi[2 * n + q] + act[q] * gh[2 * n + q]);
            act[2 * n + q] = cand;
            out[q] = cand + act[n + q] * (s[q] - cand);
        }
        return;
    }
    for (int64_t q = 0; q < 2 * n; q++) act[q] = sigm(gi[q] + gh[q]);
    for (int64_t q = 2 * n; q < 3 * n; q++) act[q] = tanh_(gi[q] + gh[q]);
    for (int64_t q = 3 * n; q < 4 * n; q++) act[q] = sigm(gi[q] + gh[q]);
    for (int64_t q = 0; q < n; q++) {
        const float c = act[n + q] * s[n + q] + act[q] * act[2 * n + q];
        out[n + q] = c;
        out[q] = act[3 * n + q] * tanh_(c);
    }
}

/* One step of one tile backward: the gradients of the input side `da` and of the hidden
 * side `dgh` (both (G·N_h, GTILE); they differ in the GRU's n rows, where the hidden side
 * is scaled by r), and what passes to the state before other than through W_hh (dprev,
 * (S, GTILE); the caller adds W_hhᵀ dgh). `ds` is the gradient of the step's output
 * state, `s` the state before it, `act` its activations, `gh` its hidden side. */
INLINE void cell_back(float *restrict da, float *restrict dgh, float *restrict dprev,
                      const float *restrict ds,
                      const float *restrict s, const float *restrict act,
                      const float *restrict gh, int64_t nh, int lstm) {
    const int64_t n = nh * GTILE;
    if (!lstm) {
        float *dar = da, *daz = da + n, *dan = da + 2 * n;
        for (int64_t q = 0; q < n; q++) {
            const float r = act[q], z = act[n + q], cand = act[2 * n + q], dh = ds[q];
            const float a_n = dh * (1.0f - z) * (1.0f - cand * cand);
            dan[q] = a_n;
            daz[q] = dh * (s[q] - cand) * z * (1.0f - z);
            dar[q] = a_n * gh[2 * n + q] * r * (1.0f - r);
            dprev[q] = dh * z;
            dgh[q] = dar[q];
            dgh[n + q] = daz[q];
            dgh[2 * n + q] = a_n * r;
        }
        return;
    }
    for (int64_t q = 0; q < n; q++) {
        const float i = act[q], f = act[n + q], g = act[2 * n + q], o = act[3 * n + q];
        const float c = f * s[n + q] + i * g, tc = tanh_(c), dh = ds[q];
        const float dc = ds[n + q] + dh * o * (1.0f - tc * tc);
        da[q] = dc * g * i * (1.0f - i);
        da[n + q] = dc * s[n + q] * f * (1.0f - f);
        da[2 * n + q] = dc * i * (1.0f - g * g);
        da[3 * n + q] = dh * tc * o * (1.0f - o);
        dprev[q] = 0.0f;
        dprev[n + q] = dc * f;
    }
    memcpy(dgh, da, sizeof(float) * 4 * n);
}


/* lane[j] += a[j] b[j] (b NULL: += a[j]): a sum over the batch kept per lane of the tile,
 * so that it vectorizes (a float sum taken in order cannot); `reduce_lanes` adds the
 * lanes up in double once per tile. */
INLINE void add_lanes(float *restrict lane, const float *restrict a,
                             const float *restrict b) {
    if (b) {
        for (int j = 0; j < GTILE; j++) lane[j] += a[j] * b[j];
    } else {
        for (int j = 0; j < GTILE; j++) lane[j] += a[j];
    }
}

static void reduce_lanes(double *restrict acc, float *restrict lanes, int64_t count) {
    for (int64_t q = 0; q < count; q++) {
        double sum = 0.0;
        for (int j = 0; j < GTILE; j++) sum += lanes[q * GTILE + j];
        acc[q] += sum;
        memset(lanes + q * GTILE, 0, sizeof(float) * GTILE);
    }
}

/* The readout of one step of one tile: the loss's lanes and its gradient g (N_out, GTILE)
 * with respect to the readout's pre-activation, from the state's h (N_h, GTILE). */
INLINE void readout_step(float *restrict g, float *restrict lloss, const float *restrict h,
                         const float *restrict y, const float *restrict wy,
                         const float *restrict by, const float *restrict imp,
                         const float *restrict valid, int64_t nh, int64_t nout, float scale) {
    for (int64_t o = 0; o < nout; o++) {
        float z[GTILE];
        const float b0 = by ? by[o] : 0.0f;
        for (int j = 0; j < GTILE; j++) z[j] = b0;
        for (int64_t l = 0; l < nh; l++) {
            const float w = wy[l * nout + o];
            for (int j = 0; j < GTILE; j++) z[j] += w * h[l * GTILE + j];
        }
        for (int j = 0; j < GTILE; j++) {
            const float y_hat = z[j] > 0 ? z[j] : 0.0f;
            const float err = (y_hat - y[o * GTILE + j]) * valid[j];
            lloss[j] += imp[o] * err * err;
            g[o * GTILE + j] = z[j] > 0 ? 2.0f * imp[o] * err * scale : 0.0f;
        }
    }
}

EXPORT int tempsup_gated_loss_f32(const int64_t *dims, const float *wih, const float *bih,
                                  const float *whh, const float *bhh, const float *wy,
                                  const float *by, const float *x, const float *y,
                                  const float *imp, float *loss, float *gwih, float *gbih,
                                  float *gwhh, float *gbhh, float *gwy, float *gby) {
    const int64_t T = dims[0], M = dims[1], nh = dims[2], nx = dims[3], nout = dims[4];
    const int64_t B = dims[5];
    const int lstm = dims[6] == 1, grad = (dims[7] & 2) != 0;
    const int x_shared = (dims[7] & 4) != 0, y_shared = (dims[7] & 8) != 0;
    const int64_t rows = (lstm ? 4 : 3) * nh, S = (lstm ? 2 : 1) * nh, n = nh * GTILE;
    /* per tile: the states of every step, the readout's gradients of every step, and one
     * step's input side, hidden side, activations, their gradients, x, y and state grads */
    const int64_t floats = (T + 1) * S * GTILE + T * nout * GTILE + 5 * rows * GTILE
                           + 3 * S * GTILE + (nx + nout + 2) * GTILE;
    const int64_t n_acc = rows * (nx + nh + 2) + nh * nout + nout;
    float *scratch = malloc(sizeof(float) * (floats + n_acc * GTILE));
    double *acc = malloc(sizeof(double) * n_acc);
    if (!scratch || !acc) {
        free(scratch);
        free(acc);
        return 1;
    }
    float *st = scratch, *gz = st + (T + 1) * S * GTILE, *gi = gz + T * nout * GTILE;
    float *gh = gi + rows * GTILE, *act = gh + rows * GTILE, *da = act + rows * GTILE;
    float *dgh = da + rows * GTILE, *ds = dgh + rows * GTILE, *dprev = ds + S * GTILE;
    float *tmp = dprev + S * GTILE, *xt = tmp + S * GTILE, *yt = xt + nx * GTILE;
    float *lloss = yt + nout * GTILE, *valid = lloss + GTILE;
    /* the gradients' sums, per lane (lanes) and in double (acc), in the same order */
    float *lanes = valid + GTILE;
    float *a_wih = lanes, *a_bih = a_wih + rows * nx * GTILE, *a_whh = a_bih + rows * GTILE;
    float *a_bhh = a_whh + rows * nh * GTILE, *a_wy = a_bhh + rows * GTILE;
    float *a_by = a_wy + nh * nout * GTILE;
    double *d_wih = acc, *d_bih = d_wih + rows * nx, *d_whh = d_bih + rows;
    double *d_bhh = d_whh + rows * nh, *d_wy = d_bhh + rows, *d_by = d_wy + nh * nout;
    const float scale = 1.0f / (float)B;
    for (int64_t m = 0; m < M; m++) {
        const float *w_ih = wih + m * rows * nx, *b_ih = bih + m * rows;
        const float *w_hh = whh + m * rows * nh, *b_hh = bhh + m * rows;
        const float *w_y = wy + m * nh * nout, *b_y = by ? by + m * nout : NULL;
        const float *xm = x + (x_shared ? 0 : m) * T * nx * B;
        const float *ym = y + (y_shared ? 0 : m) * T * nout * B;
        memset(acc, 0, sizeof(double) * n_acc);
        memset(lanes, 0, sizeof(float) * n_acc * GTILE);
        double total = 0.0;
        for (int64_t b0 = 0; b0 < B; b0 += GTILE) {
            const int64_t nb = B - b0 < GTILE ? B - b0 : GTILE;
            for (int j = 0; j < GTILE; j++) valid[j] = j < nb ? 1.0f : 0.0f;
            for (int j = 0; j < GTILE; j++) lloss[j] = 0.0f;
            memset(st, 0, sizeof(float) * S * GTILE);
            for (int64_t t = 0; t < T; t++) {
                float *s = st + t * S * GTILE, *next = s + S * GTILE;
                load_tile(xt, xm + t * nx * B, nx, B, b0, nb);
                load_tile(yt, ym + t * nout * B, nout, B, b0, nb);
                affine(gi, w_ih, b_ih, xt, rows, nx);
                affine(gh, w_hh, b_hh, s, rows, nh);
                cell_step(next, act, s, gi, gh, nh, lstm);
                readout_step(gz + t * nout * GTILE, lloss, next, yt, w_y, b_y, imp, valid, nh,
                             nout, scale);
            }
            for (int j = 0; j < GTILE; j++) total += lloss[j];
            if (!grad) continue;
            memset(ds, 0, sizeof(float) * S * GTILE);
            for (int64_t t = T - 1; t >= 0; t--) {
                const float *s = st + t * S * GTILE, *h = s + S * GTILE;
                const float *g = gz + t * nout * GTILE;
                for (int64_t o = 0; o < nout; o++) {
                    add_lanes(a_by + o * GTILE, g + o * GTILE, NULL);
                    for (int64_t l = 0; l < nh; l++) {
                        add_lanes(a_wy + (l * nout + o) * GTILE, g + o * GTILE, h + l * GTILE);
                        const float w = w_y[l * nout + o];
                        for (int j = 0; j < GTILE; j++) ds[l * GTILE + j] += w * g[o * GTILE + j];
                    }
                }
                load_tile(xt, xm + t * nx * B, nx, B, b0, nb);
                affine(gi, w_ih, b_ih, xt, rows, nx);
                affine(gh, w_hh, b_hh, s, rows, nh);
                cell_step(tmp, act, s, gi, gh, nh, lstm); /* the gates again */
                cell_back(da, dgh, dprev, ds, s, act, gh, nh, lstm);
                for (int64_t r = 0; r < rows; r++) {
                    add_lanes(a_bih + r * GTILE, da + r * GTILE, NULL);
                    add_lanes(a_bhh + r * GTILE, dgh + r * GTILE, NULL);
                    for (int64_t c = 0; c < nx; c++)
                        add_lanes(a_wih + (r * nx + c) * GTILE, da + r * GTILE, xt + c * GTILE);
                    for (int64_t l = 0; l < nh; l++)
                        add_lanes(a_whh + (r * nh + l) * GTILE, dgh + r * GTILE, s + l * GTILE);
                }
                /* the state before: W_hhᵀ dgh into h, plus what cell_back passed */
                for (int64_t l = 0; l < nh; l++) {
                    float col[GTILE];
                    for (int j = 0; j < GTILE; j++) col[j] = dprev[l * GTILE + j];
                    for (int64_t r = 0; r < rows; r++) {
                        const float wr = w_hh[r * nh + l];
                        for (int j = 0; j < GTILE; j++) col[j] += wr * dgh[r * GTILE + j];
                    }
                    memcpy(ds + l * GTILE, col, sizeof col);
                }
                if (lstm) memcpy(ds + n, dprev + n, sizeof(float) * n);
            }
            reduce_lanes(acc, lanes, n_acc);
        }
        loss[m] = (float)(total / (double)B);
        if (!grad) continue;
        for (int64_t q = 0; q < rows * nx; q++) gwih[m * rows * nx + q] = (float)d_wih[q];
        for (int64_t q = 0; q < rows * nh; q++) gwhh[m * rows * nh + q] = (float)d_whh[q];
        for (int64_t q = 0; q < rows; q++) {
            gbih[m * rows + q] = (float)d_bih[q];
            gbhh[m * rows + q] = (float)d_bhh[q];
        }
        for (int64_t q = 0; q < nh * nout; q++) gwy[m * nh * nout + q] = (float)d_wy[q];
        if (gby)
            for (int64_t q = 0; q < nout; q++) gby[m * nout + q] = (float)d_by[q];
    }
    free(scratch);
    free(acc);
    return 0;
}
