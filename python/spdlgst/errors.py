"""The exception a loader raises for a pipeline that fails."""
from __future__ import annotations

from typing import Optional


class LoaderError(RuntimeError):
    """A pipeline error: the element's message, with its debug detail."""

    def __init__(self, message: str, debug: Optional[str] = None,
                 source: Optional[str] = None):
        super().__init__(message if not source else f"{source}: {message}")
        self.debug = debug
        self.source = source
