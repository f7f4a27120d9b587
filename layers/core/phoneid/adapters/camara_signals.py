"""The carrier's open fraud signals through an operator's CAMARA network APIs.

One adapter per CAMARA API (SIM Swap, Call Forwarding Signal, KYC Tenure, Number Recycling, KYC
Match, Device Reachability and Roaming Status), all sharing one :class:`CamaraNetworkClient`: a
2-legged OAuth token (``client_credentials``, ``client_secret_basic``, the same credentials as Mobile
Auth) cached until shortly before it expires, and ``POST`` JSON calls with an ``x-correlator``.

Every call either answers, or raises :class:`SignalSourceError` (network error, timeout, 5xx,
401/403, 429, malformed answer); the policy decides what a missing signal means. An operator that
has no data for the number (404 ``IDENTIFIER_NOT_FOUND``, or 422) gives each API's neutral answer.
Phone numbers and personal data never appear in logs or error messages.
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final, get_args

from aws_lambda_powertools import Logger

from phoneid.adapters.camara import OperatorConfig
from phoneid.adapters.throttling import is_throttled
from phoneid.domain.signals import KycAnswer, KycClaim, KycResult, SignalSourceError

logger = Logger(child=True)

SIM_SWAP: Final = "/sim-swap/v2/retrieve-date"
CALL_FORWARDING: Final = "/call-forwarding-signal/v0.4/unconditional-call-forwardings"
TENURE: Final = "/kyc-tenure/v0.2/check-tenure"
NUMBER_RECYCLING: Final = "/number-recycling/v0.2/check"
KYC_MATCH: Final = "/kyc-match/v0.4/match"
REACHABILITY: Final = "/device-reachability-status/v1/retrieve"
ROAMING: Final = "/device-roaming-status/v1/retrieve"

# KycClaim field -> CAMARA KYC Match property (the answer is "<property>Match").
KYC_FIELDS: Final[Mapping[str, str]] = {
    "given_name": "givenName",
    "family_name": "familyName",
    "birthdate": "birthdate",
    "id_document": "idDocument",
    "address": "address",
    "postal_code": "postalCode",
    "locality": "locality",
    "region": "region",
    "email": "email",
}
_KYC_ANSWERS: Final = frozenset(get_args(KycAnswer))

# Roaming, but the operator names no visited country (e.g. international networks, MCC 901):
# the ISO 3166 user-assigned code for "unknown", so that "roaming" is never mistaken for "at home".
UNKNOWN_COUNTRY: Final = "ZZ"

# Each socket's timeout in production: the signals are gathered while a request waits.
DEFAULT_TIMEOUT_SECONDS: Final = 2.0
_REFRESH_MARGIN_SECONDS: Final = 30.0
_DEFAULT_TOKEN_LIFETIME_SECONDS: Final = 300


class CamaraRefused(SignalSourceError):
    """The operator answered with a CAMARA error ``{status, code, message}`` other than "no data"."""

    def __init__(self, api: str, status: int, code: str | None) -> None:
        super().__init__(f"CAMARA {api}: HTTP {status} {code or ''}".rstrip())
        self.status = status
        self.code = code


@dataclass(frozen=True)
class _Token:
    value: str
    refresh_at: float  # on the client's monotonic clock


class _Unauthorized(Exception):
    pass


class CamaraNetworkClient:
    """POST JSON to the operator's network APIs with a cached 2-legged token; safe across threads.

    ``config`` gives the token URL and credentials (read from Secrets Manager on first use);
    ``base_url`` is where the APIs live (``{apiRoot}``); ``timeout`` is every socket's timeout in
    seconds, token requests included.
    """

    def __init__(
        self,
        config: Callable[[], OperatorConfig],
        base_url: str,
        *,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not base_url.startswith(("https://", "http://")):
            raise ValueError("the CAMARA network API URL must be http(s)")
        self._config = config
        self._base_url = base_url.rstrip("/")
        self._timeout = timeout
        self._clock = clock
        self._token: _Token | None = None
        self._attempts = 0  # token requests made
        self._failure: str | None = None  # why the latest token request failed
        self._lock = threading.Lock()

    def post(
        self, api: str, path: str, body: Mapping[str, Any] | None, *, method: str = "POST"
    ) -> dict[str, Any] | None:
        """The operator's JSON answer (``{}`` when it has none); None when it has no data for the number.

        ``api`` names the API in errors and logs. A token the operator no longer accepts (401) is
        dropped and the call made once more with a fresh one. ``method`` DELETE sends no body.
        """
        for attempt in (1, 2):
            token = self._bearer(api)
            try:
                return self._call(api, path, body, token, method)
            except _Unauthorized:
                self._drop(token)
                if attempt == 2:
                    logger.warning("CAMARA call refused", extra={"api": api, "status": 401})
                    raise CamaraRefused(api, 401, "UNAUTHENTICATED") from None
        raise AssertionError("unreachable")  # pragma: no cover

    # --- token -----------------------------------------------------------------------------------

    def _bearer(self, api: str) -> str:
        attempts = self._attempts
        with self._lock:  # one token request at a time; the others wait and reuse its outcome
            now = self._clock()
            if self._token is not None and now < self._token.refresh_at:
                return self._token.value
            if self._failure is not None and self._attempts != attempts:
                # The request this call waited for failed: fail alike rather than wait once more.
                raise SignalSourceError(self._failure)
            self._attempts += 1
            try:
                self._token, self._failure = self._fetch_token(api, now), None
            except SignalSourceError as error:
                self._token, self._failure = None, str(error)
                raise
            return self._token.value

    def _drop(self, token: str) -> None:
        with self._lock:
            if self._token is not None and self._token.value == token:
                self._token = None

    def _fetch_token(self, api: str, now: float) -> _Token:
        try:
            config = self._config()
        except Exception as error:  # Secrets Manager, or a malformed secret
            unavailable = SignalSourceError(f"CAMARA {api}: operator credentials unavailable")
            unavailable.throttled = is_throttled(error)
            raise unavailable from error
        basic = base64.b64encode(f"{config.client_id}:{config.client_secret}".encode()).decode()
        status, answer = self._send(
            f"CAMARA {api} token",
            config.token_url,
            urllib.parse.urlencode({"grant_type": "client_credentials"}).encode(),
            {"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
        )
        if status != 200:
            raise SignalSourceError(f"CAMARA {api} token: HTTP {status}")
        value, lifetime = (
            answer.get("access_token"),
            answer.get("expires_in", _DEFAULT_TOKEN_LIFETIME_SECONDS),
        )
        if not isinstance(value, str) or not value or not isinstance(lifetime, int | float) or lifetime <= 0:
            raise SignalSourceError(f"CAMARA {api} token: malformed answer")
        # Refresh shortly before expiry: 30 s early, or halfway through a very short lifetime.
        early = min(_REFRESH_MARGIN_SECONDS, lifetime / 2)
        return _Token(value=value, refresh_at=now + lifetime - early)

    # --- calls -----------------------------------------------------------------------------------

    def _call(
        self, api: str, path: str, body: Mapping[str, Any] | None, token: str, method: str
    ) -> dict[str, Any] | None:
        correlator = str(uuid.uuid4())
        status, answer = self._send(
            f"CAMARA {api}",
            f"{self._base_url}{path}",
            json.dumps(body).encode() if body is not None else None,
            {
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "x-correlator": correlator,
            },
            method,
        )
        if status in (200, 201, 202, 204):  # 201, 202 and 204: subscriptions made and deleted
            return answer
        code = answer.get("code")
        code = code if isinstance(code, str) else None
        if status == 401:
            raise _Unauthorized
        if (status == 404 and code == "IDENTIFIER_NOT_FOUND") or status == 422:
            return None
        logger.warning(
            "CAMARA call refused",
            extra={"api": api, "status": status, "code": code, "xCorrelator": correlator},
        )
        raise CamaraRefused(api, status, code)

    def _send(
        self, what: str, url: str, data: bytes | None, headers: Mapping[str, str], method: str = "POST"
    ) -> tuple[int, dict[str, Any]]:
        """(status, JSON object) of one call; SignalSourceError when there is no usable answer."""
        if not url.startswith(("https://", "http://")):
            raise SignalSourceError(f"{what}: URL must be http(s)")
        request = urllib.request.Request(url, data=data, headers=dict(headers), method=method)  # noqa: S310
        try:
            try:
                with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310
                    status, raw = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, raw = error.code, error.read()
        except (OSError, http.client.HTTPException) as error:  # URLError, timeouts, resets
            reason = error.reason if isinstance(error, urllib.error.URLError) else error
            name = type(reason).__name__ if isinstance(reason, BaseException) else type(error).__name__
            logger.warning("CAMARA call failed", extra={"call": what, "error": name})
            raise SignalSourceError(f"{what}: {name}") from None
        if status >= 500:
            logger.warning("CAMARA call failed", extra={"call": what, "status": status})
            raise SignalSourceError(f"{what}: HTTP {status}")
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            if status in (200, 201):
                raise SignalSourceError(f"{what}: malformed answer (HTTP {status})")
            answer = {}
        return status, answer


def _field(api: str, answer: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = answer.get(name)
    if not isinstance(value, kind):
        raise SignalSourceError(f"CAMARA {api}: malformed answer ({name})")
    return value


class CamaraSimSwap:
    """SIM Swap ``/retrieve-date``: when the SIM last changed (None: no change known, or no data)."""

    API = "SIM Swap"

    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def latest_change(self, phone_number: str) -> datetime | None:
        answer = self._client.post(self.API, SIM_SWAP, {"phoneNumber": phone_number})
        if answer is None:
            return None
        value = _field(self.API, answer, "latestSimChange", (str, type(None)))
        if value is None:
            return None
        try:
            changed = datetime.fromisoformat(value)
        except ValueError:
            raise SignalSourceError(f"CAMARA {self.API}: malformed answer (latestSimChange)") from None
        return changed if changed.tzinfo else changed.replace(tzinfo=UTC)


class CamaraCallForwarding:
    """Call Forwarding Signal ``/unconditional-call-forwardings``: whether it is active."""

    API = "Call Forwarding Signal"

    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def unconditional(self, phone_number: str) -> bool:
        answer = self._client.post(self.API, CALL_FORWARDING, {"phoneNumber": phone_number})
        return answer is not None and bool(_field(self.API, answer, "active", bool))


class CamaraTenure:
    """KYC Tenure ``/check-tenure``: whether the subscriber has held the number since a date."""

    API = "KYC Tenure"

    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def held_since(self, phone_number: str, since: date) -> bool:
        answer = self._client.post(
            self.API, TENURE, {"phoneNumber": phone_number, "tenureDate": since.isoformat()}
        )
        return answer is not None and bool(_field(self.API, answer, "tenureDateCheck", bool))


class CamaraNumberRecycling:
    """Number Recycling ``/check``: whether the subscriber changed after a date."""

    API = "Number Recycling"

    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def recycled_since(self, phone_number: str, since: date) -> bool:
        answer = self._client.post(
            self.API, NUMBER_RECYCLING, {"phoneNumber": phone_number, "specifiedDate": since.isoformat()}
        )
        return answer is not None and bool(_field(self.API, answer, "phoneNumberRecycled", bool))


class CamaraKycMatch:
    """KYC Match ``/match``: the operator's subscriber data against the claim, field by field.

    Only supplied fields are sent and answered. A field the operator leaves out of its answer is
    ``not_available``. An operator that checks the ID document first and refuses with 403
    ``KNOW_YOUR_CUSTOMER.ID_DOCUMENT_MISMATCH`` has answered too: the document is ``false`` and the
    rest ``not_available``.
    """

    API = "KYC Match"

    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def match(self, phone_number: str, claim: KycClaim) -> KycResult:
        supplied = {name: value for name, value in claim.supplied().items() if name in KYC_FIELDS}
        if not supplied:
            return KycResult({})  # CAMARA requires at least one field; nothing to compare
        body = {"phoneNumber": phone_number, **{KYC_FIELDS[name]: value for name, value in supplied.items()}}
        try:
            answer = self._client.post(self.API, KYC_MATCH, body)
        except CamaraRefused as error:
            if error.code == "KNOW_YOUR_CUSTOMER.ID_DOCUMENT_MISMATCH" and "id_document" in supplied:
                return KycResult(
                    {name: "false" if name == "id_document" else "not_available" for name in supplied}
                )
            raise
        if answer is None:
            return KycResult(dict.fromkeys(supplied, "not_available"))
        fields: dict[str, KycAnswer] = {}
        for name in supplied:
            value = answer.get(f"{KYC_FIELDS[name]}Match", "not_available")
            if value not in _KYC_ANSWERS:
                raise SignalSourceError(f"CAMARA {self.API}: malformed answer ({KYC_FIELDS[name]}Match)")
            fields[name] = value
        return KycResult(fields)


class CamaraDeviceStatus:
    """Device Reachability Status and Device Roaming Status ``/retrieve``."""

    REACHABILITY_API = "Device Reachability Status"
    ROAMING_API = "Device Roaming Status"

    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def reachable(self, phone_number: str) -> bool:
        api = self.REACHABILITY_API
        answer = self._client.post(api, REACHABILITY, {"device": {"phoneNumber": phone_number}})
        return answer is not None and bool(_field(api, answer, "reachable", bool))

    def roaming_country(self, phone_number: str) -> str | None:
        """The visited country (ISO 3166 alpha-2); None at home; ``ZZ`` when roaming somewhere unnamed."""
        api = self.ROAMING_API
        answer = self._client.post(api, ROAMING, {"device": {"phoneNumber": phone_number}})
        if answer is None or not _field(api, answer, "roaming", bool):
            return None
        countries = answer.get("countryName") or []
        if not isinstance(countries, list) or not all(isinstance(c, str) for c in countries):
            raise SignalSourceError(f"CAMARA {api}: malformed answer (countryName)")
        return countries[0].upper() if countries else UNKNOWN_COUNTRY
