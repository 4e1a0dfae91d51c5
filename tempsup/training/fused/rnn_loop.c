/* The time loop of tempsup's recurrent training loss, fused: forward and backward in one call.
 *
 *     h_t = W_x x_t + W_h σ_h(h_{t-1}),   ŷ_t = σ_y(W_yᵀ h_t + b),   y_t = x_{t-k}
 *     L_m = (1/B) Σ_b Σ_t Σ_i I_i (ŷ_{t,i} − y_{t,i})²
 *
 * with σ_h, σ_y each ReLU or the identity, for M models at once. PyTorch's time
 * loop (tempsup/training/losses.py, `_RecurrentLoss`) makes a dozen passes over
 * (M, N_h, B) tensors per time step, one small op each; here a tile of batch
 * columns runs through every t forward and back while its state stays in cache,
 * so a step of a small model costs its arithmetic and little more. The numbers
 * are the same as the PyTorch path's up to rounding (tests/test_fused.py).
 *
 * Entry points tempsup_rnn_loss_f32 and tempsup_rnn_loss_f64 (float, double):
 *   dims  int64[7]: T, M, N_h, N_x, B, x's model stride (0: one input stream
 *         shared by every model, else T·N_x·B), flags (1: σ_h = ReLU, 2: σ_y =
 *         ReLU, 4: compute the gradients, 8: tied readout)
 *   k     int64[M]: each model's delay
 *   wx (M, N_h, N_x), wh (M, N_h, N_h), wy (M, N_h, N_x), bias (M, N_x) or NULL,
 *   x (M or 1, T, N_x, B), imp (N_x): contiguous, read only
 *   loss (M) and, with flag 4, gx, gh, gy like wx, wh, wy and gb like bias
 *   (NULL without a bias): written, the gradients of Σ_m L_m.
 * With flag 8 the readout is tied, W_y = w_k = W_h σ_h(w_{k-1}), w_0 = W_x (each
 * model's own k): wy and gy are not used (NULL), and the readout's gradient is
 * passed back into gx and gh here. Done through autograd, that chain of k small
 * products cost more per step than the time loop itself.
 * Single-threaded (the caller's process decides its threads); the sums over the
 * batch are taken in double.
 */

#include <stdint.h>
#include <stdlib.h>

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* batch columns per tile: the unit every inner loop vectorizes over */
#ifndef TILE
#define TILE 16
#endif
#if TILE % 8 != 0
#error "TILE must be a multiple of 8: tile_reg takes a tile in vectors of 8 floats"
#endif

/* `tile_reg`'s vectors: 32 bytes (8 floats, 4 doubles; AVX where the CPU has it, pairs
 * of 16-byte registers elsewhere), at any address of their element type; a comparison
 * gives a mask of the integers of the same width */
typedef float vec_f32 __attribute__((vector_size(32), aligned(4)));
typedef int32_t ivec_f32 __attribute__((vector_size(32), aligned(4)));
typedef double vec_f64 __attribute__((vector_size(32), aligned(8)));
typedef int64_t ivec_f64 __attribute__((vector_size(32), aligned(8)));

#define REAL float
#define NAME(x) x##_f32
#include "rnn_loop.h"
#undef REAL
#undef NAME

#define REAL double
#define NAME(x) x##_f64
#include "rnn_loop.h"
#undef REAL
#undef NAME

/* the GRU's and the LSTM's recurrence (float32): gated_loop.h */
#include "gated_loop.h"
