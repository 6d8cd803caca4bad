"""Shared fixtures of the command-line tests."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The CLI configures the 'swath' logger; leave it as it was for other tests."""
    logger = logging.getLogger("swath")
    level, handlers = logger.level, list(logger.handlers)
    yield
    logger.setLevel(level)
    logger.handlers[:] = handlers
