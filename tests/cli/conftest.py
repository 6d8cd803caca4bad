"""Shared fixtures of the command-line tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _restore_logging(restore_logging: None) -> None:
    """Every command configures the 'swath' logger: each test leaves it as it was."""
