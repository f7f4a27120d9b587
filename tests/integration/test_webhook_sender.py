"""The webhook sender over real sockets: receivers on loopback stand for hosts on the internet.

The resolver is injected (a fixed DNS), and so is the function that opens the TCP connection: it
records the checked address PhoneID connects to and carries the connection to a receiver on this
machine, the way a route to that public address would. What goes over the socket is real: HTTP,
TLS with SNI and a certificate checked against the host name.
"""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from phoneid.adapters.webhook_http import HttpWebhookSender
from phoneid.domain.webhooks import WebhookRefused, WebhookUnreachable

PUBLIC_ADDRESS = "93.184.216.34"  # an address on the internet; the route to it is the test's


@dataclass
class Receiver:
    """An HTTP(S) server on loopback that answers ``status`` (with ``location``) and keeps what came."""

    status: int = 204
    location: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)  # SNI of each TLS handshake
    connections: int = 0
    port: int = 0


def serve(receiver: Receiver, tls: ssl.SSLContext | None = None) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            self.send_response(receiver.status)
            if receiver.location:
                self.send_header("Location", receiver.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

    class Server(ThreadingHTTPServer):
        def get_request(self) -> tuple[socket.socket, Any]:
            connection, address = super().get_request()
            receiver.connections += 1
            if tls is None:
                return connection, address
            return tls.wrap_socket(connection, server_side=True), address

    server = Server(("127.0.0.1", 0), Handler)
    receiver.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture
def receivers() -> Iterator[list[ThreadingHTTPServer]]:
    running: list[ThreadingHTTPServer] = []
    yield running
    for server in running:
        server.shutdown()
        server.server_close()


@dataclass
class Certificates:
    authority: Path  # the CA file a client trusts
    server: ssl.SSLContext  # the receiver's side, certified for ``name``
    name: str


def certificates(tmp_path: Path, name: str) -> Certificates:
    """A CA of the test's own, and a receiver certificate it signed for ``name``."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "PhoneID test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    authority = tmp_path / f"ca-{name}.pem"
    authority.write_bytes(ca.public_bytes(pem))
    chain, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    chain.write_bytes(leaf.public_bytes(pem))
    key.write_bytes(
        server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(chain, key)
    return Certificates(authority, server, name)


class FixedDns:
    """Answers from a table, a list of answers per name used in turn (to play DNS rebinding)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    def addresses(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        return self.answers[host][min(len(self.lookups), len(self.answers[host])) - 1]


class RoutedToLoopback:
    """Opens TCP connections: a checked public address goes to the receiver standing for it."""

    def __init__(self, routes: dict[tuple[str, int], int]) -> None:
        self.routes = routes
        self.connected: list[tuple[str, int]] = []

    def __call__(self, address: tuple[str, int], timeout: float) -> socket.socket:
        self.connected.append(address)
        return socket.create_connection(("127.0.0.1", self.routes[address]), timeout)


def trusting(authority: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(authority))


def test_a_public_address_is_delivered_to_over_tls_verified_for_the_host_name(
    tmp_path: Path, receivers: list[ThreadingHTTPServer]
) -> None:
    # Given a receiver certified for hooks.example.com, reached at the public address its name has
    certs = certificates(tmp_path, "hooks.example.com")
    receiver = Receiver()
    certs.server.sni_callback = lambda _sock, name, _ctx: receiver.server_names.append(name)  # type: ignore[assignment,func-returns-value]
    receivers.append(serve(receiver, certs.server))
    dns = FixedDns({"hooks.example.com": [[PUBLIC_ADDRESS]]})
    route = RoutedToLoopback({(PUBLIC_ADDRESS, 443): receiver.port})
    sender = HttpWebhookSender(resolver=dns, connect=route, tls=trusting(certs.authority))

    # When a delivery is posted to the https URL
    status = sender.post(
        "https://hooks.example.com/phoneid?token=t", b'{"events":[]}', {"Content-Type": "application/json"}
    )

    # Then the receiver got it, over TLS for the name, from a connection to the checked address
    assert status == 204
    assert route.connected == [(PUBLIC_ADDRESS, 443)]
    assert receiver.server_names == ["hooks.example.com"]
    (request,) = receiver.requests
    assert request["path"] == "/phoneid?token=t"
    assert request["headers"]["Host"] == "hooks.example.com"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["body"] == b'{"events":[]}'


def test_a_certificate_for_another_name_fails_the_delivery(
    tmp_path: Path, receivers: list[ThreadingHTTPServer]
) -> None:
    # Given a receiver whose certificate names another host
    certs = certificates(tmp_path, "other.example.net")
    receiver = Receiver()
    receivers.append(serve(receiver, certs.server))
    dns = FixedDns({"hooks.example.com": [[PUBLIC_ADDRESS]]})
    route = RoutedToLoopback({(PUBLIC_ADDRESS, 443): receiver.port})
    sender = HttpWebhookSender(resolver=dns, connect=route, tls=trusting(certs.authority))

    # When a delivery is posted, then there is no answer: the certificate was refused
    with pytest.raises(WebhookUnreachable, match="SSLCertVerificationError"):
        sender.post("https://hooks.example.com/phoneid", b"{}", {})
    assert receiver.requests == []


def test_the_host_is_resolved_once_and_the_checked_address_connected_to(
    tmp_path: Path, receivers: list[ThreadingHTTPServer]
) -> None:
    # Given a name that answers a public address first and the metadata address after (rebinding)
    certs = certificates(tmp_path, "rebind.example.com")
    receiver = Receiver()
    receivers.append(serve(receiver, certs.server))
    dns = FixedDns({"rebind.example.com": [[PUBLIC_ADDRESS], ["169.254.169.254"]]})
    route = RoutedToLoopback({(PUBLIC_ADDRESS, 8443): receiver.port})
    sender = HttpWebhookSender(resolver=dns, connect=route, tls=trusting(certs.authority))

    # When a delivery is posted
    assert sender.post("https://rebind.example.com:8443/in", b"{}", {}) == 204

    # Then the name was looked up once, and the connection went to the address that was checked
    assert dns.lookups == ["rebind.example.com"]
    assert route.connected == [(PUBLIC_ADDRESS, 8443)]
    assert receiver.requests[0]["headers"]["Host"] == "rebind.example.com:8443"

    # And the next delivery, looking up again, is refused before connecting
    with pytest.raises(WebhookRefused, match=r"metadata address \(169\.254\.169\.254\)"):
        sender.post("https://rebind.example.com:8443/in", b"{}", {})
    assert route.connected == [(PUBLIC_ADDRESS, 8443)]


def test_a_redirect_is_an_answer_and_is_not_followed(
    tmp_path: Path, receivers: list[ThreadingHTTPServer]
) -> None:
    # Given a receiver that redirects to another place, listening on this machine
    elsewhere = Receiver()
    receivers.append(serve(elsewhere))
    certs = certificates(tmp_path, "hooks.example.com")
    redirecting = Receiver(status=302, location=f"http://127.0.0.1:{elsewhere.port}/steal")
    receivers.append(serve(redirecting, certs.server))
    sender = HttpWebhookSender(
        resolver=FixedDns({"hooks.example.com": [[PUBLIC_ADDRESS]]}),
        connect=RoutedToLoopback({(PUBLIC_ADDRESS, 443): redirecting.port}),
        tls=trusting(certs.authority),
    )

    # When a delivery is posted
    status = sender.post("https://hooks.example.com/phoneid", b"{}", {})

    # Then the 302 is the answer, and the place it pointed to got nothing
    assert status == 302
    assert len(redirecting.requests) == 1
    assert elsewhere.connections == 0


def test_a_name_resolving_to_loopback_reaches_no_receiver_on_a_deployed_stack(
    receivers: list[ThreadingHTTPServer],
) -> None:
    # Given a receiver listening on loopback, and a public-looking name that resolves there
    receiver = Receiver()
    receivers.append(serve(receiver))
    dns = FixedDns({"hooks.example.com": [["127.0.0.1"]]})

    # When a deployed stack's sender (the machine's own connections) posts to it
    sender = HttpWebhookSender(resolver=dns)
    with pytest.raises(WebhookRefused, match=r"loopback address \(127\.0\.0\.1\)"):
        sender.post(f"https://hooks.example.com:{receiver.port}/phoneid", b"{}", {})

    # Then no connection reached the receiver
    assert receiver.connections == 0
    assert receiver.requests == []


def test_the_local_stack_delivers_to_a_loopback_receiver_by_name_and_address(
    receivers: list[ThreadingHTTPServer],
) -> None:
    from phoneid.adapters.webhook_http import SystemResolver

    receiver = Receiver(status=200)
    receivers.append(serve(receiver))
    sender = HttpWebhookSender(resolver=SystemResolver(), allow_loopback=True)

    assert sender.post(f"http://127.0.0.1:{receiver.port}/a", b"1", {}) == 200
    assert sender.post(f"http://localhost:{receiver.port}/b", b"2", {}) == 200

    assert [r["path"] for r in receiver.requests] == ["/a", "/b"]
