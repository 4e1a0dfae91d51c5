"""Measurements on runs: the claims' measures, captions, sweeps."""
