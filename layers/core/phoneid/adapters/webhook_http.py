"""POSTing a webhook delivery: the host resolved once, every address checked, the connection made to
a checked address; TLS verified for the host name; 5 s timeout; redirects not followed.

A webhook URL makes PhoneID's own network send a request, so the URL's rules
(``phoneid.domain.webhooks.check_url``) are applied again here (a URL stored before a rule existed
gets no exemption), and then to every address the host resolves to. The connection goes to an
address so checked: ``http.client`` is given the address, never the name to look up again, so a
name that answers a public address to the check and a private one to the connection (DNS
rebinding) gets nowhere. The name still goes in the ``Host`` header and, for https, in the TLS
handshake (SNI), and the certificate is verified against it.

A redirect is an answer (3xx), not a new destination: following it would let a receiver point
PhoneID at any address, so it counts as a failed delivery like any other non-2xx. No proxy is used.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Callable, Mapping, Sequence
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from phoneid.domain.webhooks import (
    InvalidWebhookUrl,
    WebhookRefused,
    WebhookUnreachable,
    address_refusal,
    check_url,
)
from phoneid.ports import HostResolver

DEFAULT_TIMEOUT_SECONDS: Final = 5.0
_READ_LIMIT: Final = 4096  # the answer's body is not used; read a little so the connection closes

# (address, port), timeout -> a connected socket; ``socket.create_connection`` but for tests.
Connect = Callable[[tuple[str, int], float], socket.socket]


def _connect(address: tuple[str, int], timeout: float) -> socket.socket:
    return socket.create_connection(address, timeout)


class SystemResolver:
    """The resolver of the machine (``getaddrinfo``): DNS, ``/etc/hosts``, IP literals as themselves."""

    def addresses(self, host: str, port: int) -> list[str]:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
        return list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in found))


def _first_connected(addresses: Sequence[str], port: int, timeout: float, connect: Connect) -> socket.socket:
    """A socket to the first of ``addresses`` that accepts, in order (as ``create_connection`` tries
    the addresses of a name); the last failure if none does."""
    failure: OSError = OSError("no address")
    for address in addresses:
        try:
            return connect((address, port), timeout)
        except OSError as error:
            failure = error
    raise failure


class _PinnedHttp(http.client.HTTPConnection):
    """HTTP to addresses already checked; ``host`` only names the receiver in the Host header."""

    def __init__(
        self, host: str, port: int, addresses: Sequence[str], timeout: float, connect: Connect
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._addresses = addresses
        self._connect_to = connect
        self._seconds = timeout

    def connect(self) -> None:
        self.sock = _first_connected(self._addresses, self.port, self._seconds, self._connect_to)


class _PinnedHttps(http.client.HTTPSConnection):
    """HTTPS to addresses already checked, with SNI and certificate verification for ``host``."""

    def __init__(
        self,
        host: str,
        port: int,
        addresses: Sequence[str],
        timeout: float,
        connect: Connect,
        tls: ssl.SSLContext,
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=tls)
        self._addresses = addresses
        self._connect_to = connect
        self._seconds = timeout
        self._tls = tls

    def connect(self) -> None:
        plain = _first_connected(self._addresses, self.port, self._seconds, self._connect_to)
        try:
            self.sock = self._tls.wrap_socket(plain, server_hostname=self.host)
        except BaseException:
            plain.close()
            raise


class HttpWebhookSender:
    """``allow_loopback``: the local stack's receivers on this machine (never on AWS)."""

    def __init__(
        self,
        *,
        resolver: HostResolver,
        allow_loopback: bool = False,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        tls: ssl.SSLContext | None = None,
        connect: Connect = _connect,
    ) -> None:
        self._resolver = resolver
        self._allow_loopback = allow_loopback
        self._timeout = timeout
        self._tls = tls
        self._connect = connect

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:  # loads the CA bundle: once, and only when an https URL needs it
            self._tls = ssl.create_default_context()
        return self._tls

    def _checked_addresses(self, host: str, port: int) -> list[str]:
        try:
            addresses = self._resolver.addresses(host, port)
        except (OSError, UnicodeError) as error:  # gaierror: no such name, no answer
            raise WebhookUnreachable(f"name not resolved ({type(error).__name__})") from None
        if not addresses:
            raise WebhookUnreachable("name not resolved (no address)")
        for address in addresses:
            refusal = address_refusal(address, allow_loopback=self._allow_loopback)
            if refusal is not None:
                # One bad address refuses the name: connecting to "the others" would still let a
                # name that also answers a private address choose where PhoneID connects.
                raise WebhookRefused(f"the host resolves to {refusal} ({address})")
        return addresses

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        try:
            check_url(url, allow_loopback=self._allow_loopback)
        except InvalidWebhookUrl as error:
            raise WebhookRefused(str(error)) from None
        parts = urlsplit(url)
        host = parts.hostname or ""
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        addresses = self._checked_addresses(host, port)
        connection: http.client.HTTPConnection = (
            _PinnedHttps(host, port, addresses, self._timeout, self._connect, self._tls_context())
            if https
            else _PinnedHttp(host, port, addresses, self._timeout, self._connect)
        )
        target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
        try:
            connection.request("POST", target, body=body, headers=dict(headers))
            response = connection.getresponse()
            response.read(_READ_LIMIT)
            return int(response.status)
        except (OSError, http.client.HTTPException, ValueError) as error:  # refused, timeouts, TLS
            raise WebhookUnreachable(type(error).__name__) from None
        finally:
            connection.close()
