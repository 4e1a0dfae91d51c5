"""What is trained: the config, the data and the batched recurrences."""
