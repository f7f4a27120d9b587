"""The workflow steps' errors, and when a verification counts as throttled.

Step errors keep stable class names: the state machine's ``Retry``/``Catch`` match on them
(``ChunkThrottled`` is retried with backoff; ``BatchCountMismatch`` fails the execution loudly).

A verification counts as throttled (``is_throttling``) when an exception in its chain
(``__cause__``/``__context__``) is marked ``throttled``. The adapters mark what they translate: an
``InternalError`` (8000) or ``SignalSourceError`` raised from a provider error that is throttling
(``phoneid.adapters.throttling``: botocore's throttling codes, HTTP 429). Other failures of a row are
that row's Error in the output file.
"""

from __future__ import annotations


class ConnectStepError(Exception):
    """A workflow step's failure; the class name is what the state machine sees as the error."""


class ChunkThrottled(ConnectStepError):
    """A chunk's verifications were throttled by an upstream service: retried with backoff."""


class BatchCountMismatch(ConnectStepError):
    """Output rows plus error rows differ from the detail rows read: the batch failed, loudly."""


class BatchNotFound(ConnectStepError):
    """A step named a batch that has no record (or is not in the state the step needs)."""


def is_throttling(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from, is marked as an upstream's throttling."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(current, "throttled", False) is True:
            return True
        current = current.__cause__ or current.__context__
    return False
