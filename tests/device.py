"""A customer's device running possession through the client API, the way the web SDK does."""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.request
import uuid
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from phoneid_dev.events import LambdaContext, websocket_event
from phoneid_dev.gateway import HttpResponse
from tests.harness import Api, Transport


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class KeyPair:
    """A P-256 key made on the device; only its public half ever leaves it."""

    def __init__(self) -> None:
        self._private = ec.generate_private_key(ec.SECP256R1())
        numbers = self._private.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }

    def sign(self, nonce: str) -> str:
        """ECDSA P-256 / SHA-256 in WebCrypto's raw r||s form, base64url."""
        r, s = decode_dss_signature(self._private.sign(nonce.encode(), ec.ECDSA(hashes.SHA256())))
        return _b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class Device:
    def __init__(
        self,
        api: Transport,
        auth_token: str,
        *,
        msisdn: str | None = None,
        keys: dict[str, KeyPair] | None = None,
    ) -> None:
        self.api = api
        self.auth_token = auth_token
        self.msisdn = msisdn  # the SIM's number, as the mobile network knows it
        self.keys = keys if keys is not None else {}  # deviceId -> key, kept across flows like IndexedDB

    def for_flow(self, auth_token: str) -> Device:
        """The same device (same SIM, same stored keys) in another flow."""
        return Device(self.api, auth_token, msisdn=self.msisdn, keys=self.keys)

    def prove(self, device_id: str | None = None, key: KeyPair | None = None) -> HttpResponse:
        """Prove a stored key by signing this session's nonce."""
        device_id = device_id or next(iter(self.keys))
        nonce = self.session()["deviceKey"]["nonce"]
        signer = key or self.keys[device_id]
        return self.call("/device-key", {"deviceId": device_id, "signature": signer.sign(nonce)})

    def register(self) -> HttpResponse:
        """Make a key and register it; the server binds it when the flow succeeds."""
        key = KeyPair()
        nonce = self.session()["deviceKey"]["nonce"]
        answer = self.call("/device-key/register", {"publicKey": key.jwk, "signature": key.sign(nonce)})
        if answer.status == 200:
            self.keys[answer.json()["deviceId"]] = key
        return answer

    def call(self, path: str, body: dict[str, Any] | None = None) -> HttpResponse:
        return self.api.post(f"/client/v1{path}", body or {}, token=self.auth_token)

    def session(self) -> dict[str, Any]:
        response = self.call("/session")
        assert response.status == 200, response.body
        return dict(response.json())

    def send_otp(self, phone_number: str | None = None) -> HttpResponse:
        return self.call("/otp", {"phoneNumber": phone_number} if phone_number else {})

    def enter(self, otp: str) -> HttpResponse:
        return self.call("/otp/verify", {"otp": otp})

    def send_link(self, phone_number: str | None = None) -> HttpResponse:
        return self.call("/instant-link", {"phoneNumber": phone_number} if phone_number else {})

    def mobile_auth(self) -> dict[str, Any]:
        """Start Mobile Auth and fetch the operator's URL over 'mobile data', following the redirect."""
        started = self.call("/mobile-auth")
        assert started.status == 200, started.body
        url = started.json()["mobileAuth"]["url"]
        if not url.startswith(self.api.public_base_url):
            url = self._through_operator(url)
        answered = self.api.get(url)
        assert answered.status == 200, answered.body
        return self.session()

    def _through_operator(self, url: str) -> str:
        assert url.startswith("http://127.0.0.1:"), url  # the fake operator on loopback
        headers = {"X-Device-Msisdn": self.msisdn} if self.msisdn else {}
        request = urllib.request.Request(url, headers=headers)  # noqa: S310 - checked above
        try:
            urllib.request.build_opener(_NoRedirect).open(request, timeout=5)
        except urllib.error.HTTPError as redirect:
            status, location = redirect.code, redirect.headers["Location"]
        else:
            raise AssertionError("the operator did not redirect")
        assert status == 302, status
        return str(location)

    def connect_socket(self) -> tuple[str, int]:
        """The desktop's WebSocket $connect with the authToken; returns (connection id, status)."""
        assert isinstance(self.api, Api), "in-process stacks only"
        connection_id = uuid.uuid4().hex[:16]
        event = websocket_event(
            route_key="$connect",
            connection_id=connection_id,
            query={"authToken": self.auth_token},
            domain_name="ws.phoneid.test",
        )
        function = self.api.stack.template.websocket_function
        answer = self.api.stack.invoke(function, event, LambdaContext(function_name=function))
        return connection_id, int(answer["statusCode"])


def latest_code(api: Transport, phone_number: str) -> str:
    text = api.outbox(phone_number)[-1]["text"]
    found = re.search(r"\b(\d{4,6})\b", text)
    assert found, text
    return found.group(1)


def latest_link(api: Transport, phone_number: str) -> str:
    found = re.search(r"https://\S+/l/[\w-]+", api.outbox(phone_number)[-1]["text"])
    assert found
    return found.group(0)


def pushed(connection_id: str) -> list[dict[str, Any]]:
    """What PostToConnection sent to a connection (moto concatenates the posts)."""
    from moto.apigatewaymanagementapi.models import apigatewaymanagementapi_backends

    connections = apigatewaymanagementapi_backends["123456789012"]["us-east-1"].connections
    data = connections[connection_id].data.decode() if connection_id in connections else ""
    decoder, messages, position = json.JSONDecoder(), [], 0
    while position < len(data):
        message, position = decoder.raw_decode(data, position)
        messages.append(message)
    return messages
