"""tempsup: explore temporal superposition in recurrent networks (Sharma et al., ICLR 2026)."""

__version__ = "0.1.0"
