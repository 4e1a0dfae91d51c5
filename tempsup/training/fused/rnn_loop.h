/* The body of the fused time loop, for one floating-point type.
 *
 * rnn_loop.c includes this file once per type with REAL (float or double) and
 * NAME(x) (the type's suffix on a name) defined. See rnn_loop.c for the model,
 * the layouts and the entry point's contract.
 */

/* One model, one tile of TILE batch columns: the forward pass over every t, then
 * the backward pass, the gradients accumulated per column ("lane") so that every
 * inner loop runs over the tile's columns, contiguous and independent (it
 * vectorizes without reassociating any sum). nh and nx are compile-time
 * constants where the caller is specialised, so the small loops unroll and the
 * state stays in registers. */
static inline __attribute__((always_inline)) void NAME(tile)(
    const int64_t T, const int64_t nh, const int64_t nx, const int64_t nb, const int64_t km,
    const int relu_h, const int relu_y, const int grad,
    const REAL *restrict wx, const REAL *restrict wh, const REAL *restrict wy,
    const REAL *restrict bias, const REAL *restrict imp,
    const REAL *restrict xb, REAL *h, REAL *act, REAL *restrict g,
    REAL *d, REAL *dn, REAL *restrict lane)
{
    REAL valid[TILE];
    for (int j = 0; j < TILE; j++) valid[j] = j < nb ? (REAL)1 : (REAL)0;
    REAL *restrict lloss = lane;                  /* TILE */
    REAL *restrict lgx = lloss + TILE;            /* nh * nx * TILE */
    REAL *restrict lgh = lgx + nh * nx * TILE;    /* nh * nh * TILE */
    REAL *restrict lgy = lgh + nh * nh * TILE;    /* nh * nx * TILE */
    REAL *restrict lgb = lgy + nh * nx * TILE;    /* nx * TILE */
    REAL *restrict zero = lgb + nx * TILE;        /* nx * TILE: the targets before t = k */
    for (int64_t q = 0; q < nx * TILE; q++) zero[q] = 0;

    /* ---- forward: h_t = W_x x_t + W_h σ_h(h_{t-1}), ŷ_t = σ_y(W_yᵀ h_t + b) ---- */
    for (int64_t t = 0; t < T; t++) {
        REAL *restrict ht = h + t * nh * TILE;
        const REAL *restrict xt = xb + t * nx * TILE;
        for (int64_t i = 0; i < nh; i++) {
            REAL acc[TILE];
            for (int j = 0; j < TILE; j++) acc[j] = 0;
            for (int64_t n = 0; n < nx; n++) {
                const REAL w = wx[i * nx + n];
                for (int j = 0; j < TILE; j++) acc[j] += w * xt[n * TILE + j];
            }
            if (t > 0) {
                const REAL *restrict prev = act + (t - 1) * nh * TILE;
                for (int64_t l = 0; l < nh; l++) {
                    const REAL w = wh[i * nh + l];
                    for (int j = 0; j < TILE; j++) acc[j] += w * prev[l * TILE + j];
                }
            }
            for (int j = 0; j < TILE; j++) ht[i * TILE + j] = acc[j];
        }
        if (relu_h) {
            REAL *restrict at = act + t * nh * TILE;
            for (int64_t q = 0; q < nh * TILE; q++) at[q] = ht[q] > 0 ? ht[q] : 0;
        }
        /* the readout while h_t is in cache; the error, weighted by I_i and masked by
         * the readout's ReLU, is the gradient g_t the backward pass starts from */
        const REAL *restrict yt = t >= km ? xb + (t - km) * nx * TILE : zero;
        REAL *restrict gt = g + t * nx * TILE;
        for (int64_t n = 0; n < nx; n++) {
            REAL z[TILE];
            const REAL b0 = bias ? bias[n] : (REAL)0;
            for (int j = 0; j < TILE; j++) z[j] = b0;
            for (int64_t i = 0; i < nh; i++) {
                const REAL w = wy[i * nx + n];
                for (int j = 0; j < TILE; j++) z[j] += w * ht[i * TILE + j];
            }
            const REAL w = imp[n];
            for (int j = 0; j < TILE; j++) {
                const REAL y_hat = relu_y ? (z[j] > 0 ? z[j] : 0) : z[j];
                const REAL err = (y_hat - yt[n * TILE + j]) * valid[j];
                const REAL werr = w * err;
                lloss[j] += werr * err;
                gt[n * TILE + j] = relu_y ? (y_hat > 0 ? werr : 0) : werr;
            }
        }
    }
    if (!grad) return;

    /* ---- backward: δ_t = W_y g_t + σ_h'(h_t) ⊙ W_hᵀ δ_{t+1} ---- */
    for (int64_t t = T - 1; t >= 0; t--) {
        const REAL *restrict ht = h + t * nh * TILE;
        const REAL *restrict gt = g + t * nx * TILE;
        const REAL *restrict xt = xb + t * nx * TILE;
        for (int64_t i = 0; i < nh; i++) {
            REAL acc[TILE];
            for (int j = 0; j < TILE; j++) acc[j] = 0;
            if (t < T - 1) {
                for (int64_t l = 0; l < nh; l++) {
                    const REAL w = wh[l * nh + i];
                    for (int j = 0; j < TILE; j++) acc[j] += w * dn[l * TILE + j];
                }
                if (relu_h)
                    for (int j = 0; j < TILE; j++) acc[j] = ht[i * TILE + j] > 0 ? acc[j] : 0;
            }
            for (int64_t n = 0; n < nx; n++) {
                const REAL w = wy[i * nx + n];
                for (int j = 0; j < TILE; j++) acc[j] += w * gt[n * TILE + j];
            }
            for (int j = 0; j < TILE; j++) d[i * TILE + j] = acc[j];
        }
        /* dW_x += δ_t x_tᵀ, dW_h += δ_t σ_h(h_{t-1})ᵀ, dW_y += h_t g_tᵀ, db += g_t */
        for (int64_t i = 0; i < nh; i++) {
            for (int64_t n = 0; n < nx; n++)
                for (int j = 0; j < TILE; j++)
                    lgx[(i * nx + n) * TILE + j] += d[i * TILE + j] * xt[n * TILE + j];
            if (t > 0) {
                const REAL *restrict prev = act + (t - 1) * nh * TILE;
                for (int64_t l = 0; l < nh; l++)
                    for (int j = 0; j < TILE; j++)
                        lgh[(i * nh + l) * TILE + j] += d[i * TILE + j] * prev[l * TILE + j];
            }
            for (int64_t n = 0; n < nx; n++)
                for (int j = 0; j < TILE; j++)
                    lgy[(i * nx + n) * TILE + j] += ht[i * TILE + j] * gt[n * TILE + j];
        }
        for (int64_t q = 0; q < nx * TILE; q++) lgb[q] += gt[q];
        REAL *swap = d;
        d = dn;
        dn = swap;
    }
}

/* The same pass for the paper's small recurrences (N_h ≤ REG_NH, N_x = 1, constants at
 * the call), one vector of W batch columns at a time with the state, the readout's
 * error and every gradient sum in registers. In `tile` those sums live in the lane
 * array, a load and a store around each multiply-add, and cost half its instructions.
 * The arithmetic is `tile`'s, in the same order; `lane` receives the same sums. */
#define REG_NH 4
static inline __attribute__((always_inline)) void NAME(tile_reg)(
    const int64_t T, const int64_t nh, const int64_t nb, const int64_t km,
    const int relu_h, const int relu_y, const int grad,
    const REAL *restrict wx, const REAL *restrict wh, const REAL *restrict wy,
    const REAL *restrict bias, const REAL *restrict imp,
    const REAL *restrict xb, REAL *restrict hs, REAL *restrict gs, REAL *restrict lane)
{
    typedef NAME(vec) V;
    typedef NAME(ivec) I;
    const int W = (int)(sizeof(V) / sizeof(REAL));
    const V zero = {0};
    const REAL b0 = bias ? bias[0] : (REAL)0, w = imp[0];
    V *restrict H = (V *)hs; /* T * nh: h_t */
    V *restrict G = (V *)gs; /* T: g_t */
    for (int v0 = 0; v0 < TILE; v0 += W) {
        V valid = zero;
        for (int j = 0; j < W; j++) valid[j] = v0 + j < nb ? (REAL)1 : (REAL)0;
#define X(t) (*(const V *)(xb + (t) * TILE + v0))
#define RELU(v) ((V)((I)(v) & ((v) > zero)))
        V a[REG_NH], lloss = zero;
        for (int64_t t = 0; t < T; t++) {
            const V xt = X(t);
            V ht[REG_NH];
#pragma GCC unroll 4
            for (int64_t i = 0; i < nh; i++) {
                V acc = zero;
                acc += wx[i] * xt;
                if (t > 0)
#pragma GCC unroll 4
                    for (int64_t l = 0; l < nh; l++) acc += wh[i * nh + l] * a[l];
                ht[i] = acc;
                H[t * nh + i] = acc;
            }
#pragma GCC unroll 4
            for (int64_t i = 0; i < nh; i++) a[i] = relu_h ? RELU(ht[i]) : ht[i];
            V z = zero + b0;
#pragma GCC unroll 4
            for (int64_t i = 0; i < nh; i++) z += wy[i] * ht[i];
            const V yt = t >= km ? X(t - km) : zero;
            if (relu_y) {
                const I on = z > zero;
                const V err = ((V)((I)z & on) - yt) * valid;
                const V werr = w * err;
                lloss += werr * err;
                G[t] = (V)((I)werr & on);
            } else {
                const V err = (z - yt) * valid;
                const V werr = w * err;
                lloss += werr * err;
                G[t] = werr;
            }
        }
        *(V *)(lane + v0) = lloss;
        if (!grad) continue;
        V lgx[REG_NH], lgh[REG_NH * REG_NH], lgy[REG_NH], lgb = zero, dn[REG_NH];
#pragma GCC unroll 4
        for (int64_t i = 0; i < nh; i++) {
            lgx[i] = lgy[i] = dn[i] = zero;
#pragma GCC unroll 4
            for (int64_t l = 0; l < nh; l++) lgh[i * nh + l] = zero;
        }
        for (int64_t t = T - 1; t >= 0; t--) {
            const V xt = X(t), gt = G[t];
            V d[REG_NH], prev[REG_NH];
#pragma GCC unroll 4
            for (int64_t i = 0; i < nh; i++) {
                V acc = zero;
                if (t < T - 1) {
#pragma GCC unroll 4
                    for (int64_t l = 0; l < nh; l++) acc += wh[l * nh + i] * dn[l];
                    if (relu_h) acc = (V)((I)acc & (H[t * nh + i] > zero));
                }
                acc += wy[i] * gt;
                d[i] = acc;
                const V before = t > 0 ? H[(t - 1) * nh + i] : zero;
                prev[i] = relu_h ? RELU(before) : before;
            }
#pragma GCC unroll 4
            for (int64_t i = 0; i < nh; i++) {
                lgx[i] += d[i] * xt;
                if (t > 0)
#pragma GCC unroll 4
                    for (int64_t l = 0; l < nh; l++) lgh[i * nh + l] += d[i] * prev[l];
                lgy[i] += H[t * nh + i] * gt;
            }
            lgb += gt;
#pragma GCC unroll 4
            for (int64_t i = 0; i < nh; i++) dn[i] = d[i];
        }
        /* the lane array's order: loss, W_x, W_h, W_y, b (see `tile`) */
        REAL *restrict out = lane + TILE + v0;
#pragma GCC unroll 4
        for (int64_t i = 0; i < nh; i++) *(V *)(out + i * TILE) = lgx[i];
        out += nh * TILE;
#pragma GCC unroll 16
        for (int64_t q = 0; q < nh * nh; q++) *(V *)(out + q * TILE) = lgh[q];
        out += nh * nh * TILE;
#pragma GCC unroll 4
        for (int64_t i = 0; i < nh; i++) *(V *)(out + i * TILE) = lgy[i];
        *(V *)(out + nh * TILE) = lgb;
#undef X
#undef RELU
    }
}

/* A tied readout, W_y = w_k: w_0 = W_x, w_s = W_h σ_h(w_{s-1}) (the impulse response,
 * `BatchedRNN.directions`), w_0 … w_k into `chain` (k + 1 blocks of nh·nx). */
static inline __attribute__((always_inline)) void NAME(impulse)(
    const int64_t nh, const int64_t nx, const int64_t km, const int relu_h,
    const REAL *restrict wx, const REAL *restrict wh, REAL *restrict chain)
{
    for (int64_t q = 0; q < nh * nx; q++) chain[q] = wx[q];
    for (int64_t s = 1; s <= km; s++) {
        const REAL *restrict prev = chain + (s - 1) * nh * nx;
        REAL *restrict ws = chain + s * nh * nx;
        for (int64_t i = 0; i < nh; i++)
            for (int64_t n = 0; n < nx; n++) {
                REAL acc = 0;
                for (int64_t l = 0; l < nh; l++) {
                    const REAL a = prev[l * nx + n];
                    acc += wh[i * nh + l] * (relu_h && !(a > 0) ? (REAL)0 : a);
                }
                ws[i * nx + n] = acc;
            }
    }
}

/* The gradient of W_y = w_k passed back through the impulse response into W_x and W_h
 * (`tgy`, `tgx`, `tgh`: the sums the tiles left, in double; `gs`, `ga`: nh·nx each). */
static inline __attribute__((always_inline)) void NAME(impulse_backward)(
    const int64_t nh, const int64_t nx, const int64_t km, const int relu_h,
    const REAL *restrict wh, const REAL *restrict chain, const double *restrict tgy,
    double *restrict tgx, double *restrict tgh, double *gs, double *ga)
{
    for (int64_t q = 0; q < nh * nx; q++) gs[q] = tgy[q];
    for (int64_t s = km; s >= 1; s--) {
        const REAL *restrict prev = chain + (s - 1) * nh * nx; /* w_{s-1}, before σ_h */
        for (int64_t i = 0; i < nh; i++) /* dW_h += G_s σ_h(w_{s-1})ᵀ */
            for (int64_t l = 0; l < nh; l++) {
                double acc = 0;
                for (int64_t n = 0; n < nx; n++) {
                    const REAL a = prev[l * nx + n];
                    acc += gs[i * nx + n] * (relu_h && !(a > 0) ? 0.0 : (double)a);
                }
                tgh[i * nh + l] += acc;
            }
        for (int64_t l = 0; l < nh; l++) /* G_{s-1} = σ_h'(w_{s-1}) ⊙ W_hᵀ G_s */
            for (int64_t n = 0; n < nx; n++) {
                double acc = 0;
                for (int64_t i = 0; i < nh; i++) acc += (double)wh[i * nh + l] * gs[i * nx + n];
                ga[l * nx + n] = relu_h && !(prev[l * nx + n] > 0) ? 0.0 : acc;
            }
        double *swap = gs;
        gs = ga;
        ga = swap;
    }
    for (int64_t q = 0; q < nh * nx; q++) tgx[q] += gs[q];
}

/* Every model, every tile; nh and nx as the caller passes them (constants when specialised). */
static inline __attribute__((always_inline)) void NAME(models)(
    const int reg, const int64_t T, const int64_t M, const int64_t nh, const int64_t nx,
    const int64_t B,
    const int64_t x_stride, const int relu_h, const int relu_y, const int grad, const int tied,
    const int64_t *k, const REAL *wx, const REAL *wh, const REAL *wy, const REAL *bias,
    const REAL *x, const REAL *imp, REAL *loss, REAL *gx, REAL *gh, REAL *gy, REAL *gb,
    REAL *work, REAL *chain, double *total)
{
    const int64_t lanes = 1 + 2 * nh * nx + nh * nh + nx; /* per-lane sums, in TILEs */
    REAL *xb = work;                                      /* T * nx * TILE */
    REAL *h = xb + T * nx * TILE;                         /* T * nh * TILE */
    REAL *act = relu_h ? h + T * nh * TILE : h;           /* T * nh * TILE */
    REAL *g = h + 2 * T * nh * TILE;                      /* T * nx * TILE */
    REAL *d = g + T * nx * TILE;                          /* nh * TILE */
    REAL *dn = d + nh * TILE;                             /* nh * TILE */
    REAL *lane = dn + nh * TILE;                          /* lanes * TILE */
    for (int64_t m = 0; m < M; m++) {
        const REAL *xm = x + m * x_stride;
        const REAL *wym = wy + m * nh * nx;
        if (tied) {
            NAME(impulse)(nh, nx, k[m], relu_h, wx + m * nh * nx, wh + m * nh * nh, chain);
            wym = chain + k[m] * nh * nx;
        }
        for (int64_t q = 0; q < lanes * TILE; q++) total[q] = 0;
        for (int64_t b0 = 0; b0 < B; b0 += TILE) {
            const int64_t nb = B - b0 < TILE ? B - b0 : TILE;
            if (nb == TILE) {
                for (int64_t r = 0; r < T * nx; r++)
                    for (int j = 0; j < TILE; j++) xb[r * TILE + j] = xm[r * B + b0 + j];
            } else {
                for (int64_t r = 0; r < T * nx; r++)
                    for (int j = 0; j < TILE; j++) xb[r * TILE + j] = j < nb ? xm[r * B + b0 + j] : 0;
            }
            for (int64_t q = 0; q < lanes * TILE; q++) lane[q] = 0;
            if (reg)
                NAME(tile_reg)(T, nh, nb, k[m], relu_h, relu_y, grad, wx + m * nh * nx,
                               wh + m * nh * nh, wym, bias ? bias + m * nx : 0, imp, xb, h,
                               g, lane);
            else
                NAME(tile)(T, nh, nx, nb, k[m], relu_h, relu_y, grad, wx + m * nh * nx,
                           wh + m * nh * nh, wym, bias ? bias + m * nx : 0, imp, xb, h,
                           act, g, d, dn, lane);
            /* a tile's lanes hold sums over T steps: the sum over the batch is in double,
             * lane by lane (independent adds, vectorized), the lanes summed once a model */
            for (int64_t q = 0; q < lanes * TILE; q++) total[q] += lane[q];
        }
        for (int64_t q = 0; q < lanes; q++) {
            double s = 0;
            for (int j = 0; j < TILE; j++) s += total[q * TILE + j];
            total[q] = s; /* q <= q * TILE: already read */
        }
        const double scale = 2.0 / (double)B;
        loss[m] = (REAL)(total[0] / (double)B);
        if (!grad) continue;
        double *tgx = total + 1, *tgh = tgx + nh * nx, *tgy = tgh + nh * nh;
        const double *tgb = tgy + nh * nx;
        if (tied) {
            double *gs = total + lanes * TILE; /* past the lanes: 2·nh·nx, see the entry */
            NAME(impulse_backward)(nh, nx, k[m], relu_h, wh + m * nh * nh, chain, tgy, tgx,
                                   tgh, gs, gs + nh * nx);
        }
        for (int64_t q = 0; q < nh * nx; q++) gx[m * nh * nx + q] = (REAL)(tgx[q] * scale);
        for (int64_t q = 0; q < nh * nh; q++) gh[m * nh * nh + q] = (REAL)(tgh[q] * scale);
        if (!tied)
            for (int64_t q = 0; q < nh * nx; q++) gy[m * nh * nx + q] = (REAL)(tgy[q] * scale);
        if (gb)
            for (int64_t q = 0; q < nx; q++) gb[m * nx + q] = (REAL)(tgb[q] * scale);
    }
}

/* The entry point: see rnn_loop.c. Returns 0, or 1 when the scratch memory could not be had. */
EXPORT int NAME(tempsup_rnn_loss)(
    const int64_t *dims, const int64_t *k, const REAL *wx, const REAL *wh, const REAL *wy,
    const REAL *bias, const REAL *x, const REAL *imp, REAL *loss, REAL *gx, REAL *gh, REAL *gy,
    REAL *gb)
{
    const int64_t T = dims[0], M = dims[1], nh = dims[2], nx = dims[3], B = dims[4];
    const int64_t x_stride = dims[5];
    const int relu_h = (int)(dims[6] & 1), relu_y = (int)((dims[6] >> 1) & 1);
    const int grad = (int)((dims[6] >> 2) & 1), tied = (int)((dims[6] >> 3) & 1);
    const int64_t lanes = 1 + 2 * nh * nx + nh * nh + nx;
    int64_t kmax = 0;
    for (int64_t m = 0; m < M; m++) kmax = k[m] > kmax ? k[m] : kmax;
    /* the tiles' scratch, then the tied readout's impulse response w_0 … w_kmax */
    const int64_t n_work = (2 * T * nx + 2 * T * nh + 2 * nh + lanes + nx) * TILE;
    const int64_t n_chain = tied ? (kmax + 1) * nh * nx : 0;
    REAL *work = (REAL *)malloc((size_t)(n_work + n_chain) * sizeof(REAL));
    double *total = (double *)malloc((size_t)(lanes * TILE + 2 * nh * nx) * sizeof(double));
    if (!work || !total) {
        free(work);
        free(total);
        return 1;
    }
#define RUN(REG, NH, NX)                                                                        \
    NAME(models)(REG, T, M, NH, NX, B, x_stride, relu_h, relu_y, grad, tied, k, wx, wh, wy,    \
                 bias, x, imp, loss, gx, gh, gy, gb, work, work + n_work, total)
    /* the small recurrences the paper trains, specialised: the loops over N_h unroll and
     * their state stays in registers (REG_NH) */
    if (nx == 1 && nh == 1) RUN(1, 1, 1);
    else if (nx == 1 && nh == 2) RUN(1, 2, 1);
    else if (nx == 1 && nh == 3) RUN(1, 3, 1);
    else if (nx == 1 && nh == 4) RUN(1, 4, 1);
    else RUN(0, nh, nx);
#undef RUN
    free(work);
    free(total);
    return 0;
}
