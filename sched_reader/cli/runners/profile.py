"""``--profile FILE``: the calibration profile a command's speed predictions apply (one command only)."""

from __future__ import annotations

from sched_reader.models.calibration_profile import load_profile, use_profile


def activate_profile(path: str | None) -> None:
    """Load ``--profile FILE`` (exit 2 on a bad file) and make it the one the cost model applies."""
    use_profile(load_profile(path) if path else None)
