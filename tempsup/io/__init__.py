"""A run as data: its file, its summary, and networks brought in from elsewhere."""
