"""Closed forms and geometry: the expected loss, its terms, the gauge, feature directions."""
