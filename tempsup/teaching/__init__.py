"""The classroom: the guided lesson, the class poll and the static site."""
