"""A fake mobile operator that follows CAMARA's APIs, for tests and the local stack.

OpenID Connect authorization code flow with network-based authentication: ``GET /authorize``
"recognises" the device's SIM and redirects back with a code; ``POST /token`` exchanges the code
(client_secret_basic); ``POST /number-verification/v2/verify`` answers ``devicePhoneNumberVerified``
and ``GET /number-verification/v2/device-phone-number`` the device's number.

A real network knows which SIM a request came through. Here the device says so itself, with the
header ``X-Device-Msisdn`` (tests), or the operator assumes ``device_msisdn`` (the local stack).
A request with neither is not on a mobile network: CAMARA's ``access_denied`` redirect.

The carrier's fraud signals (SIM Swap, Call Forwarding Signal, KYC Tenure, Number Recycling, KYC
Match, Device Reachability and Roaming Status) take a 2-legged token (``client_credentials`` with the
same basic credentials) and answer from facts scripted per number, with :meth:`FakeOperator.script`
or ``POST /_script`` (``{"phoneNumber": ..., facts...}``; ``DELETE /_script`` forgets every script):

``latestSimChange``      ISO date-time or null (default: null, no SIM change known)
``callForwarding``       unconditional call forwarding on (default false)
``subscribedSince``      date the subscriber took the number (default 2015-01-01); tenure holds since
                         any ``tenureDate`` on or after it
``subscriberChangedAt``  date the subscriber last changed; recycled when after ``specifiedDate``
``subscriber``           KYC data {givenName, familyName, birthdate, idDocument, address, postalCode,
                         locality, region, email}; matched ignoring case and accents, a field the
                         subscriber lacks is ``not_available`` (default: none at all)
``reachable``            default true
``roamingCountry``       ISO code or null (default null: at home)
``unknown``              true: every API answers 404 ``IDENTIFIER_NOT_FOUND``
``fail``                 {api: status or "slow:<seconds>" or "malformed"} for the APIs ``sim-swap``,
                         ``call-forwarding``, ``tenure``, ``recycling``, ``kyc-match``,
                         ``reachability``, ``roaming``: answer that CAMARA error, answer late, or
                         answer something that is not JSON

CAMARA subscriptions (SIM Swap, Device Reachability and Roaming Status) and the notifications a
changed fact sends to their sinks: ``phoneid_dev.operator_subscriptions`` (``subscriptions``).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from phoneid_dev.operator_facts import ANSWERS, ERRORS, SIGNAL_APIS, check_fact
from phoneid_dev.operator_subscriptions import SUBSCRIPTION_APIS, OperatorSubscriptions

API_PATH = "/number-verification/v2"
SCOPE = "number-verification:verify"

_PHONE = re.compile(r"^\+[1-9][0-9]{4,14}$")


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
    token_lifetime: int = 300  # seconds, in the token answer's expires_in
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _tokens: dict[str, str] = field(default_factory=dict)  # access token -> msisdn
    _client_tokens: set[str] = field(default_factory=set)  # 2-legged access tokens
    _client_grants: int = 0
    _facts: dict[str, dict[str, Any]] = field(default_factory=dict)  # phone number -> scripted facts
    subscriptions: OperatorSubscriptions = field(default_factory=OperatorSubscriptions)
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
            "CAMARA_NETWORK_API_URL": self.base_url,
        }

    @property
    def client_grants(self) -> int:
        """How many 2-legged (client_credentials) tokens the operator has issued."""
        with self._lock:
            return self._client_grants

    def revoke_tokens(self) -> None:
        """Forget every access token issued (as after an operator restart)."""
        with self._lock:
            self._tokens.clear()
            self._client_tokens.clear()

    # --- scripted facts ---------------------------------------------------------------------------

    def script(self, phone_number: str, **facts: Any) -> None:
        """Set facts about ``phone_number`` (added to those scripted before); see the module doc."""
        if not isinstance(phone_number, str) or not _PHONE.match(phone_number):
            raise ValueError("phoneNumber must be E.164")
        checked = {name: check_fact(name, value) for name, value in facts.items()}
        with self._lock:
            before = dict(self._facts.get(phone_number, {}))
            self._facts.setdefault(phone_number, {}).update(checked)
            after = dict(self._facts[phone_number])
        self.subscriptions.notice(phone_number, before, after)

    def script_json(self, payload: Mapping[str, Any]) -> None:
        """``script`` from a JSON object ``{"phoneNumber": ..., facts...}`` (``POST /_script``)."""
        if not isinstance(payload, Mapping):
            raise ValueError("the script must be a JSON object")
        facts = dict(payload)
        self.script(facts.pop("phoneNumber", None), **facts)

    def clear_scripts(self) -> None:
        with self._lock:
            self._facts.clear()

    def facts(self, phone_number: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._facts.get(phone_number, {}))

    @property
    def secret_string(self) -> str:
        return json.dumps({"clientId": self.client_id, "clientSecret": self.client_secret})

    def start(self) -> FakeOperator:
        self._server = _OperatorServer(self)
        self.port = int(self._server.server_address[1])
        # A short poll lets stop() return at once (tests start and stop an operator each).
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

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
        if form.get("grant_type") == "client_credentials":
            token = secrets.token_urlsafe(24)
            with self._lock:
                self._client_tokens.add(token)
                self._client_grants += 1
            request._send(
                200, {"access_token": token, "token_type": "Bearer", "expires_in": self.token_lifetime}
            )
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
        request._send(
            200,
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": self.token_lifetime,
                "scope": SCOPE,
            },
        )

    def _bearer(self, header: str | None) -> str | None:
        if not header or not header.startswith("Bearer "):
            return None
        with self._lock:
            return self._tokens.get(header.removeprefix("Bearer "))

    # --- network APIs (2-legged) --------------------------------------------------------------------

    def _authorised(self, request: Any) -> bool:
        """A 2-legged token this operator issued; else the request is answered 401."""
        header = request.headers.get("Authorization") or ""
        with self._lock:
            authorised = (
                header.startswith("Bearer ") and header.removeprefix("Bearer ") in self._client_tokens
            )
        if not authorised:
            request._error(401, *ERRORS[401])
        return authorised

    def _subscription(self, request: Any, body: str | None) -> None:
        if not self._authorised(request):
            return
        if body is None:
            status, answer = self.subscriptions.delete(request.path)
        else:
            try:
                status, answer = self.subscriptions.create(request.path, json.loads(body or "{}"))
            except ValueError:
                status, answer = 400, {"status": 400, "code": "INVALID_ARGUMENT", "message": "not JSON"}
        request._send(status, answer)

    def _signal(self, request: Any, api: str, body: str) -> None:
        if not self._authorised(request):
            return
        try:
            payload = json.loads(body or "{}")
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            request._error(400, *ERRORS[400])
            return
        phone = (payload.get("device") or {}) if api in ("reachability", "roaming") else payload
        phone = phone.get("phoneNumber") if isinstance(phone, dict) else None
        if phone is None:
            request._error(422, "MISSING_IDENTIFIER", "The device cannot be identified.")
            return
        if not isinstance(phone, str) or not _PHONE.match(phone):
            request._error(400, *ERRORS[400])
            return
        facts = self.facts(phone)
        failure = (facts.get("fail") or {}).get(api)
        if isinstance(failure, int):
            request._error(failure, *ERRORS.get(failure, ("INTERNAL", "Scripted failure.")))
            return
        if failure == "malformed":
            request._send_raw(200, b"<html>not JSON</html>")
            return
        if isinstance(failure, str):  # "slow:<seconds>"
            time.sleep(float(failure.removeprefix("slow:")))
        if facts.get("unknown"):
            request._error(404, *ERRORS[404])
            return
        try:
            answer = ANSWERS[api](facts, payload)
        except (ValueError, TypeError):
            request._error(400, *ERRORS[400])
            return
        request._send(200, answer)


class _OperatorRequests(BaseHTTPRequestHandler):
    """One HTTP request to the operator (``server`` is its ``_OperatorServer``)."""

    server: _OperatorServer

    @property
    def operator(self) -> FakeOperator:
        return self.server.operator

    def log_message(self, *_: Any) -> None:
        return

    def _send(
        self, status: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
    ) -> None:
        payload = json.dumps(body).encode() if body is not None else b""
        self._send_raw(status, payload, headers)

    def _send_raw(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                self.send_header(name, value)
            # The device fetches /authorize cross-origin (the web SDK's "fetch" Mobile Auth).
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller gave up waiting (a scripted slow answer)

    def _error(self, status: int, code: str, message: str) -> None:
        self._send(status, {"status": status, "code": code, "message": message})

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/authorize":
            self.operator._authorize(self, query)
        elif url.path == f"{API_PATH}/device-phone-number":
            msisdn = self.operator._bearer(self.headers.get("Authorization"))
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

    def do_DELETE(self) -> None:
        if self.path == "/_script":
            self.operator.clear_scripts()
            self._send(204)
        elif self.path.rpartition("/")[0] in SUBSCRIPTION_APIS:
            self.operator._subscription(self, None)
        else:
            self._error(404, "NOT_FOUND", "The specified resource is not found.")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        if self.path == "/token":
            self.operator._token(self, dict(urllib.parse.parse_qsl(body)))
        elif self.path == "/_script":
            try:
                self.operator.script_json(json.loads(body or "{}"))
            except (ValueError, TypeError) as error:
                self._error(400, "INVALID_ARGUMENT", f"invalid script: {error}")
                return
            self._send(204)
        elif self.path in SUBSCRIPTION_APIS:
            self.operator._subscription(self, body)
        elif self.path in SIGNAL_APIS:
            self.operator._signal(self, SIGNAL_APIS[self.path], body)
        elif self.path == f"{API_PATH}/verify":
            msisdn = self.operator._bearer(self.headers.get("Authorization"))
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


class _OperatorServer(ThreadingHTTPServer):
    """The operator's HTTP server: each request's handler reaches the operator through it."""

    def __init__(self, operator: FakeOperator) -> None:
        self.operator = operator
        super().__init__((operator.host, operator.port), _OperatorRequests)
