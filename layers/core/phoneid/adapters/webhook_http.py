"""POSTing a webhook delivery: the host resolved once, every address checked, the connection made to
a checked address; TLS verified for the host name; 5 s for the whole POST; redirects not followed.

A webhook URL makes PhoneID's own network send a request, so the URL's rules
(``phoneid.domain.webhooks.check_url``) are applied again here (a URL stored before a rule existed
gets no exemption), and then to every address the host resolves to. The connection goes to an
address so checked: ``http.client`` is given the address, never the name to look up again, so a
name that answers a public address to the check and a private one to the connection (DNS
rebinding) gets nowhere. The name still goes in the ``Host`` header and, for https, in the TLS
handshake (SNI), and the certificate is verified against it.

A redirect is an answer (3xx), not a new destination: following it would let a receiver point
PhoneID at any address, so it counts as a failed delivery like any other non-2xx. No proxy is used.

The timeout is a deadline for the whole POST: connecting, the TLS handshake, sending and every read
of the answer share it (``_Deadline``). A socket's own timeout bounds one operation only, so a
receiver that sends a byte every second and a half would hold a delivery for as long as it likes;
here each operation is given the time left, and none starts once it is spent. The host's name is
looked up before the deadline starts (``getaddrinfo`` takes no timeout).
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from phoneid.domain.webhooks import (
    DELIVERY_DEADLINE_SECONDS,
    InvalidWebhookUrl,
    WebhookRefused,
    WebhookUnreachable,
    address_refusal,
    check_url,
)
from phoneid.ports import HostResolver

DEFAULT_TIMEOUT_SECONDS: Final = DELIVERY_DEADLINE_SECONDS
_READ_LIMIT: Final = 4096  # the answer's body is not used; read a little so the connection closes

# (address, port), timeout -> a connected socket; ``socket.create_connection`` but for tests.
Connect = Callable[[tuple[str, int], float], socket.socket]


# Seconds from a fixed point (``time.monotonic``); tests give a clock of their own.
Monotonic = Callable[[], float]


def _connect(address: tuple[str, int], timeout: float) -> socket.socket:
    return socket.create_connection(address, timeout)


class _Deadline:
    """The moment a POST must be over by; ``left()`` is the time to give the next operation."""

    def __init__(self, seconds: float, now: Monotonic) -> None:
        self._now = now
        self._at = now() + seconds

    def left(self) -> float:
        remaining = self._at - self._now()
        if remaining <= 0:
            raise TimeoutError("the delivery's deadline passed")
        return remaining


class _DeadlineSocket:
    """A connected socket (plain or TLS) whose every send and read gets the time left to the deadline
    as its timeout. ``http.client`` sends with ``sendall`` (one timeout for all of it since Python
    3.5) and reads through ``makefile``, whose reads come back here as ``recv_into``."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._sock.settimeout(self._deadline.left())
        self._sock.sendall(data, flags)

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self._sock.settimeout(self._deadline.left())
        return self._sock.recv_into(buffer, nbytes, flags)

    def makefile(self, mode: str = "rb", *_: Any, **__: Any) -> io.BufferedReader:
        return io.BufferedReader(socket.SocketIO(self, mode))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:  # what SocketIO calls on its socket when closed
        return

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()


class SystemResolver:
    """The resolver of the machine (``getaddrinfo``): DNS, ``/etc/hosts``, IP literals as themselves."""

    def addresses(self, host: str, port: int) -> list[str]:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
        return list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in found))


def _first_connected(
    addresses: Sequence[str], port: int, deadline: _Deadline, connect: Connect
) -> socket.socket:
    """A socket to the first of ``addresses`` that accepts, in order (as ``create_connection`` tries
    the addresses of a name), within the deadline; the last failure if none does."""
    failure: OSError = OSError("no address")
    for address in addresses:
        try:
            return connect((address, port), deadline.left())
        except TimeoutError:
            raise
        except OSError as error:
            failure = error
    raise failure


class _PinnedHttp(http.client.HTTPConnection):
    """HTTP to addresses already checked; ``host`` only names the receiver in the Host header."""

    def __init__(
        self, host: str, port: int, addresses: Sequence[str], deadline: _Deadline, connect: Connect
    ) -> None:
        super().__init__(host, port)
        self._addresses = addresses
        self._connect_to = connect
        self._deadline = deadline

    def connect(self) -> None:
        plain = _first_connected(self._addresses, self.port, self._deadline, self._connect_to)
        self.sock = _DeadlineSocket(plain, self._deadline)


class _PinnedHttps(http.client.HTTPSConnection):
    """HTTPS to addresses already checked, with SNI and certificate verification for ``host``."""

    def __init__(
        self,
        host: str,
        port: int,
        addresses: Sequence[str],
        deadline: _Deadline,
        connect: Connect,
        tls: ssl.SSLContext,
    ) -> None:
        super().__init__(host, port, context=tls)
        self._addresses = addresses
        self._connect_to = connect
        self._deadline = deadline
        self._tls = tls

    def connect(self) -> None:
        plain = _first_connected(self._addresses, self.port, self._deadline, self._connect_to)
        try:
            plain.settimeout(self._deadline.left())  # the handshake's reads and writes, all of them
            self.sock = _DeadlineSocket(
                self._tls.wrap_socket(plain, server_hostname=self.host), self._deadline
            )
        except BaseException:
            plain.close()
            raise


class HttpWebhookSender:
    """``allow_loopback``: the local stack's receivers on this machine (never on AWS). ``timeout``:
    the whole POST's, from connecting to the answer's last byte read. Safe to share between threads."""

    def __init__(
        self,
        *,
        resolver: HostResolver,
        allow_loopback: bool = False,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        tls: ssl.SSLContext | None = None,
        connect: Connect = _connect,
        now: Monotonic = time.monotonic,
    ) -> None:
        self._resolver = resolver
        self._allow_loopback = allow_loopback
        self._timeout = timeout
        self._tls = tls
        self._connect = connect
        self._now = now
        self._tls_made = threading.Lock()

    def _tls_context(self) -> ssl.SSLContext:
        with self._tls_made:  # loads the CA bundle: once, and only when an https URL needs it
            if self._tls is None:
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
        tls = self._tls_context() if https else None
        deadline = _Deadline(self._timeout, self._now)
        connection: http.client.HTTPConnection = (
            _PinnedHttps(host, port, addresses, deadline, self._connect, tls)
            if tls is not None
            else _PinnedHttp(host, port, addresses, deadline, self._connect)
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
