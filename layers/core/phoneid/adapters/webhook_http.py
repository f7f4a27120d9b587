"""POSTing a webhook delivery with urllib: http(s) only, 5 s timeout, redirects not followed.

A redirect is an answer (3xx), not a new destination: following it would let a receiver point
PhoneID at any address, so it counts as a failed delivery like any other non-2xx.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any, Final

from phoneid.domain.webhooks import WebhookUnreachable

DEFAULT_TIMEOUT_SECONDS: Final = 5.0
_READ_LIMIT: Final = 4096  # the answer's body is not used; read a little so the connection closes


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx is raised as an HTTPError and reported as the status


class UrllibWebhookSender:
    def __init__(self, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._timeout = timeout
        self._opener = urllib.request.build_opener(_NoRedirect())

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        if not url.startswith(("https://", "http://")):
            raise WebhookUnreachable("not an http(s) URL")
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")  # noqa: S310
        try:
            try:
                with self._opener.open(request, timeout=self._timeout) as response:
                    response.read(_READ_LIMIT)
                    return int(response.status)
            except urllib.error.HTTPError as error:
                with error:
                    error.read(_READ_LIMIT)
                return int(error.code)
        except (OSError, http.client.HTTPException, ValueError) as error:  # URLError, timeouts, TLS
            reason = error.reason if isinstance(error, urllib.error.URLError) else error
            name = type(reason).__name__ if isinstance(reason, BaseException) else type(error).__name__
            raise WebhookUnreachable(name) from None
