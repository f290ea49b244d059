"""Missing prerequisites: a skip with its reason on a developer's machine, a failure in CI.

Under ``CI=true`` a test whose prerequisites are missing must not pass silently as
skipped: CI installs and builds everything the suites need, so a missing piece there is
a broken build, and the run fails with the reason.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(reason: str) -> NoReturn:
    """Skip the test with ``reason``, or fail it under CI."""
    if in_ci():
        pytest.fail(f"prerequisite missing under CI: {reason}", pytrace=False)
    pytest.skip(reason)
