"""The exception a loader raises for a pipeline that fails."""
from __future__ import annotations

from typing import Optional

from ._secrets import masked


class LoaderError(RuntimeError):
    """A pipeline error: the element's message, with its debug detail
    (credentials in either masked, see ``_secrets``)."""

    def __init__(self, message: str, debug: Optional[str] = None,
                 source: Optional[str] = None):
        message = masked(message)
        super().__init__(message if not source else f"{source}: {message}")
        self.debug = masked(debug)
        self.source = source
