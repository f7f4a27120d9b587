"""Whether a provider's error says it is throttling: botocore's throttling codes, or HTTP 429.

The adapters mark what they translate from such an error (``throttled = True`` on the ``InternalError``
or ``SignalSourceError`` they raise), so the services can tell a throttled upstream without knowing
any provider's codes (``phoneid.domain.connect.errors.is_throttling``: a Connect chunk is retried).
"""

from __future__ import annotations

from collections.abc import Mapping

# botocore's standard-mode retry list of throttling codes (botocore.retries.standard).
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
_TOO_MANY_REQUESTS = 429


def is_throttled(error: BaseException) -> bool:
    """Whether ``error`` (or a provider error it was raised from) is a provider's throttling."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        response = getattr(current, "response", None)
        if isinstance(response, Mapping):
            details = response.get("Error")
            code = details.get("Code") if isinstance(details, Mapping) else None
            metadata = response.get("ResponseMetadata")
            status = metadata.get("HTTPStatusCode") if isinstance(metadata, Mapping) else None
            if code in THROTTLING_CODES or status == _TOO_MANY_REQUESTS:
                return True
        current = current.__cause__ or current.__context__
    return False
