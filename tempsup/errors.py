"""The one exception type of tempsup.

Every error a user can cause (a bad config value, an unreadable run file, a
refused job) is a `TempsupError` whose message says what was expected and what
was received, so the CLI can print it as one line and the app can show it
beside the control that caused it.
"""


class TempsupError(ValueError):
    """A user-facing error: the message alone must tell the user what to fix."""
