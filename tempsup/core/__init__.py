"""What every room shares: file archives, spec keys, frame numbering, progress bars, the palette."""
