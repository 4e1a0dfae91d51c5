"""A job's status in words for the page: place in line, progress, and what to do next.

The job service reports facts (`tempsup.jobs.record.JobStatus`: state, step,
place in line, why it ended); the wording a visitor reads lives here, once.
"""

from __future__ import annotations

from tempsup.jobs.record import JobState, JobStatus


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def describe(status: JobStatus) -> str:
    """One line: "queued (2nd in line)", "training: step 340/2000", "cancelled at step
    80/2400; press Train to restart", "worker died at step 5; press Train to retry"."""
    state, where = status.state, f"step {status.step}/{status.total}"
    if state == JobState.QUEUED:
        return f"queued ({ordinal(status.position or 1)} in line)"
    if state == JobState.RUNNING:
        return f"cancelling at {where}" if status.cancelling else f"training: {where}"
    reason = status.message or f"{state.value} at {where}"
    if state == JobState.FAILED:
        return f"{reason}; press Train to retry"
    if state == JobState.CANCELLED:
        return f"{reason}; press Train to restart"
    return reason
