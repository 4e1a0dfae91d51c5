"""The names of a gated model's lens arrays in a frame and a run file, torch-free (readers
of runs import this, not `tempsup.model.lens`, which needs torch)."""

# Arrays a gated model's frame carries beside W_x, W_h, W_y, b_y (leading axes F, M):
# silent (S,) the state at rest, active (T, S, N_x) the response to one input of the law's
# mean value, nonlinearity () how far that is from the silent response, settled () 1 when
# the silent run reached a fixed point.
LENS_ARRAYS = ("silent", "active", "nonlinearity", "settled")
# the model's own parameters, its readout (net_W_y) and readout bias (net_b_y)
NET_PREFIX = "net_"
