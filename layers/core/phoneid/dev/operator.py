"""A fake mobile operator that follows CAMARA's Number Verification API, for tests and the local stack.

OpenID Connect authorization code flow with network-based authentication: ``GET /authorize``
"recognises" the device's SIM and redirects back with a code; ``POST /token`` exchanges the code
(client_secret_basic); ``POST /number-verification/v2/verify`` answers ``devicePhoneNumberVerified``
and ``GET /number-verification/v2/device-phone-number`` the device's number.

A real network knows which SIM a request came through. Here the device says so itself, with the
header ``X-Device-Msisdn`` (tests), or the operator assumes ``device_msisdn`` (the local stack).
A request with neither is not on a mobile network: CAMARA's ``access_denied`` redirect.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_PATH = "/number-verification/v2"
SCOPE = "number-verification:verify"


@dataclass
class _Grant:
    msisdn: str
    client_id: str
    redirect_uri: str


@dataclass
class FakeOperator:
    client_id: str = "phoneid"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    device_msisdn: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _tokens: dict[str, str] = field(default_factory=dict)  # access token -> msisdn
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def settings(self) -> dict[str, str]:
        """The CAMARA_* settings a stack needs to use this operator (credentials go in a secret)."""
        return {
            "CAMARA_AUTHORIZE_URL": f"{self.base_url}/authorize",
            "CAMARA_TOKEN_URL": f"{self.base_url}/token",
            "CAMARA_API_URL": f"{self.base_url}{API_PATH}",
        }

    @property
    def secret_string(self) -> str:
        return json.dumps({"clientId": self.client_id, "clientSecret": self.client_secret})

    def start(self) -> FakeOperator:
        operator = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                return

            def _send(
                self, status: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
            ) -> None:
                payload = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(name, value)
                # The device fetches /authorize cross-origin (the web SDK's "fetch" Mobile Auth).
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _error(self, status: int, code: str, message: str) -> None:
                self._send(status, {"status": status, "code": code, "message": message})

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                if url.path == "/authorize":
                    operator._authorize(self, query)
                elif url.path == f"{API_PATH}/device-phone-number":
                    msisdn = operator._bearer(self.headers.get("Authorization"))
                    if msisdn is None:
                        self._error(
                            401,
                            "UNAUTHENTICATED",
                            "Request not authenticated due to missing, invalid, or expired credentials.",
                        )
                    else:
                        self._send(200, {"devicePhoneNumber": msisdn})
                else:
                    self._error(404, "NOT_FOUND", "The specified resource is not found.")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                if self.path == "/token":
                    operator._token(self, dict(urllib.parse.parse_qsl(body)))
                elif self.path == f"{API_PATH}/verify":
                    msisdn = operator._bearer(self.headers.get("Authorization"))
                    if msisdn is None:
                        self._error(
                            401,
                            "UNAUTHENTICATED",
                            "Request not authenticated due to missing, invalid, or expired credentials.",
                        )
                        return
                    try:
                        phone = json.loads(body).get("phoneNumber")
                    except ValueError:
                        phone = None
                    if not isinstance(phone, str) or not phone.startswith("+"):
                        self._error(
                            400,
                            "INVALID_ARGUMENT",
                            "Client specified an invalid argument, request body or query param.",
                        )
                        return
                    self._send(200, {"devicePhoneNumberVerified": phone == msisdn})
                else:
                    self._error(404, "NOT_FOUND", "The specified resource is not found.")

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()

    # --- OIDC ------------------------------------------------------------------------------------

    def _authorize(self, request: Any, query: dict[str, str]) -> None:
        redirect_uri, state = query.get("redirect_uri", ""), query.get("state", "")
        if query.get("client_id") != self.client_id or not redirect_uri.startswith(("http://", "https://")):
            request._error(400, "INVALID_ARGUMENT", "Unknown client or redirect_uri")
            return
        if query.get("response_type") != "code" or SCOPE not in query.get("scope", "").split():
            params = {"error": "invalid_request", "state": state}
        else:
            msisdn = request.headers.get("X-Device-Msisdn") or self.device_msisdn
            if not msisdn:
                # Not on this operator's mobile network: no silent authentication possible.
                params = {
                    "error": "access_denied",
                    "error_description": "not on a mobile network",
                    "state": state,
                }
            else:
                code = secrets.token_urlsafe(16)
                with self._lock:
                    self._codes[code] = _Grant(msisdn, self.client_id, redirect_uri)
                params = {"code": code, "state": state}
        request._send(302, None, {"Location": f"{redirect_uri}?{urllib.parse.urlencode(params)}"})

    def _token(self, request: Any, form: dict[str, str]) -> None:
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        if request.headers.get("Authorization") != f"Basic {expected}":
            request._send(401, {"error": "invalid_client"})
            return
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)  # single use
        if (
            form.get("grant_type") != "authorization_code"
            or grant is None
            or grant.redirect_uri != form.get("redirect_uri")
        ):
            request._send(400, {"error": "invalid_grant"})
            return
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = grant.msisdn
        request._send(200, {"access_token": token, "token_type": "Bearer", "expires_in": 300, "scope": SCOPE})

    def _bearer(self, header: str | None) -> str | None:
        if not header or not header.startswith("Bearer "):
            return None
        with self._lock:
            return self._tokens.get(header.removeprefix("Bearer "))
