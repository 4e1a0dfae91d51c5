"""How models are trained: the batched loop, its losses, the fused time loop."""
