"""``PhoneIdClient``: one typed method per call of the server-to-server API (docs/api.md).

The request and answer types are the generated ``phoneid_client.models``; this module adds what a
generator cannot: the access token's life, the ``Idempotency-Key`` header, and the API's errors as
exceptions (``phoneid_client.errors``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from phoneid_client.errors import error_from_response
from phoneid_client.models import (
    BatchResponse,
    ChallengeRequest,
    ChallengeResponse,
    CompleteRequest,
    CompleteResponse,
    DecisionEraseResponse,
    DecisionListResponse,
    DecisionSummaryItem,
    DecisionSummaryResponse,
    DecisionView,
    EnrollResponse,
    IdentityBatchRequest,
    IdentityEnrollRequest,
    IdentityListResponse,
    IdentityView,
    LookupResponse,
    RevokeResponse,
    StartRequest,
    StartResponse,
    SuccessResponse,
    TokenResponse,
    UnifyRequest,
    UnifyResponse,
    UnifyStatusResponse,
    ValidateResponse,
    VerifyBatchRequest,
    VerifyBatchResponse,
    VerifyRequest,
    VerifyResponse,
)
from phoneid_client.tokens import AccessTokens

Answer = TypeVar("Answer", bound=BaseModel)

# The list's filters, as DecisionSummaryItem's `kind` and `outcome` (tests/contract/test_python_sdk.py)
DecisionKind = Literal["staged", "unify", "verify", "verify-batch", "connect"]
DecisionOutcome = Literal["pass", "fail", "error"]

USER_AGENT = "phoneid-client-python/0.1.0"
IDEMPOTENCY_HEADER = "Idempotency-Key"


class PhoneIdClient:
    """A client of one PhoneID stack, with one client's credentials.

    ``base_url``: the API's address (``make dev`` prints it; a deployed stack's ``ApiUrl``).
    ``http``: an ``httpx.Client`` of your own (proxies, timeouts, a test transport); the client
    closes only the one it made. ``clock``: monotonic seconds, for the token's expiry (tests).
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._client_id = client_id
        self._client_secret = client_secret
        self._owns_http = http is None
        self._http = http if http is not None else httpx.Client(timeout=timeout)
        self._tokens = AccessTokens(self._fetch_token, clock)

    @classmethod
    def from_env(cls, **options: Any) -> PhoneIdClient:
        """A client from ``PHONEID_BASE_URL``, ``PHONEID_CLIENT_ID`` and ``PHONEID_CLIENT_SECRET``."""
        return cls(
            os.environ["PHONEID_BASE_URL"],
            os.environ["PHONEID_CLIENT_ID"],
            os.environ["PHONEID_CLIENT_SECRET"],
            **options,
        )

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> PhoneIdClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- The access token (POST /token) ---

    def access_token(self) -> str:
        """The current access token, fetched when there is none or it is close to expiring."""
        return self._tokens.current()

    def _fetch_token(self) -> TokenResponse:
        form = {
            "grant_type": "client_credentials",
            "client_id": self._client_id,
            "client_secret": self._client_secret,
        }
        response = self._http.post(f"{self._base_url}/token", data=form, headers={"User-Agent": USER_AGENT})
        if response.status_code != 200:
            raise error_from_response(response)
        return TokenResponse.model_validate(response.json())

    # --- The staged flow (docs/api.md#the-staged-flow) ---

    def start(self, request: StartRequest, *, idempotency_key: str | None = None) -> StartResponse:
        """``POST /v3/start``: a flow; hand ``authToken`` to the client SDK, keep ``correlationId``."""
        return self._call("POST", "/v3/start", StartResponse, request, idempotency_key)

    def validate(self, correlation_id: str, *, client_request_id: str | None = None) -> ValidateResponse:
        """``POST /v3/validate``: whether possession passed, once the client SDK has finished."""
        body = _correlation(correlation_id, client_request_id)
        return self._call("POST", "/v3/validate", ValidateResponse, body)

    def challenge(self, request: ChallengeRequest) -> ChallengeResponse:
        """``POST /v3/challenge``: the SSN or date of birth, when ``validate`` said ``challengeMissing``."""
        return self._call("POST", "/v3/challenge", ChallengeResponse, request)

    def complete(self, request: CompleteRequest) -> CompleteResponse:
        """``POST /v3/complete``: the individual the customer confirmed, and the evaluation."""
        return self._call("POST", "/v3/complete", CompleteResponse, request)

    # --- Unified authentication (docs/unify.md) ---

    def unify(self, request: UnifyRequest) -> UnifyResponse:
        """``POST /v3/unify``: a unified flow, with or without a device key."""
        return self._call("POST", "/v3/unify", UnifyResponse, request)

    def unify_status(
        self, correlation_id: str, *, client_request_id: str | None = None
    ) -> UnifyStatusResponse:
        """``POST /v3/unify-status``: the unified flow's outcome."""
        body = _correlation(correlation_id, client_request_id)
        return self._call("POST", "/v3/unify-status", UnifyStatusResponse, body)

    def unify_bind(self, correlation_id: str, *, client_request_id: str | None = None) -> UnifyStatusResponse:
        """``POST /v3/unify-bind``: binds the flow's device key to the identity."""
        body = _correlation(correlation_id, client_request_id)
        return self._call("POST", "/v3/unify-bind", UnifyStatusResponse, body)

    def revoke_device(
        self,
        device_id: str,
        *,
        client_request_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> RevokeResponse:
        """``POST /v3/device/revoke``: the device key no longer proves possession."""
        body = _without_none(deviceId=device_id, clientRequestId=client_request_id)
        return self._call("POST", "/v3/device/revoke", RevokeResponse, body, idempotency_key)

    # --- Verify (docs/verify.md) ---

    def verify(self, request: VerifyRequest, *, idempotency_key: str | None = None) -> VerifyResponse:
        """``POST /v3/verify``: one number (and a name, for ``verifiedUser``) checked; a pass is enrolled."""
        return self._call("POST", "/v3/verify", VerifyResponse, request, idempotency_key)

    def verify_batch(
        self, request: VerifyBatchRequest, *, idempotency_key: str | None = None
    ) -> VerifyBatchResponse:
        """``POST /v3/verify/batch``: up to 1,000 verifications, one result each, in order."""
        return self._call("POST", "/v3/verify/batch", VerifyBatchResponse, request, idempotency_key)

    # --- Identity Manager (docs/identity-manager.md) ---

    def enroll_identity(
        self, request: IdentityEnrollRequest, *, idempotency_key: str | None = None
    ) -> EnrollResponse:
        """``POST /v3/identity``: enrolls a customer's number; the same ``clientCustomerId`` again
        answers the same ``serviceId``."""
        return self._call("POST", "/v3/identity", EnrollResponse, request, idempotency_key)

    def enroll_identities(
        self, request: IdentityBatchRequest, *, idempotency_key: str | None = None
    ) -> BatchResponse:
        """``POST /v3/identity/batch``: up to 100 enrollments, one result each, in order."""
        return self._call("POST", "/v3/identity/batch", BatchResponse, request, idempotency_key)

    def list_identities(
        self,
        *,
        limit: int | None = None,
        start_key: str | None = None,
        show_inactive: bool | None = None,
        client_request_id: str | None = None,
    ) -> IdentityListResponse:
        """``GET /v3/identity``: a page of the client's identities; pass ``lastKey`` as ``start_key``."""
        query = _without_none(
            limit=limit,
            startKey=start_key,
            showInactive=None if show_inactive is None else str(show_inactive).lower(),
            clientRequestId=client_request_id,
        )
        return self._call("GET", "/v3/identity", IdentityListResponse, query=query)

    def get_identity(self, service_id: str, *, client_request_id: str | None = None) -> IdentityView:
        """``GET /v3/identity/{id}``: one identity by its ``serviceId``."""
        query = _without_none(clientRequestId=client_request_id)
        return self._call("GET", f"/v3/identity/{_segment(service_id)}", IdentityView, query=query)

    def disenroll_identity(self, service_id: str, *, client_request_id: str | None = None) -> SuccessResponse:
        """``DELETE /v3/identity/{id}``: the identity and its personal data are deleted."""
        query = _without_none(clientRequestId=client_request_id)
        path = f"/v3/identity/{_segment(service_id)}"
        return self._call("DELETE", path, SuccessResponse, query=query)

    def activate_identity(self, service_id: str, *, client_request_id: str | None = None) -> SuccessResponse:
        """``POST /v3/identity/{id}/activate``: watched for changes again."""
        body = _without_none(clientRequestId=client_request_id)
        return self._call("POST", f"/v3/identity/{_segment(service_id)}/activate", SuccessResponse, body)

    def deactivate_identity(
        self, service_id: str, *, client_request_id: str | None = None
    ) -> SuccessResponse:
        """``POST /v3/identity/{id}/deactivate``: no longer watched (no webhooks)."""
        body = _without_none(clientRequestId=client_request_id)
        path = f"/v3/identity/{_segment(service_id)}/deactivate"
        return self._call("POST", path, SuccessResponse, body)

    def lookup_identities(self, phone_number: str, *, client_request_id: str | None = None) -> LookupResponse:
        """``GET /v3/identity/{phoneNumber}/lookup``: the client's identities of one number."""
        query = _without_none(clientRequestId=client_request_id)
        path = f"/v3/identity/{_segment(phone_number)}/lookup"
        return self._call("GET", path, LookupResponse, query=query)

    # --- Decision records (docs/decision-records.md) ---

    def list_decisions(
        self,
        *,
        from_: datetime | str | None = None,
        to: datetime | str | None = None,
        phone_number: str | None = None,
        kind: DecisionKind | None = None,
        outcome: DecisionOutcome | None = None,
        reason_code: int | None = None,
        client_request_id: str | None = None,
        limit: int | None = None,
        start_key: str | None = None,
    ) -> Iterator[DecisionSummaryItem]:
        """``GET /v3/decisions``: every decision the filters keep, newest first, across all pages.

        Pages are asked for as the iteration reaches them (``limit`` records each, 1..100), until one
        has no ``lastKey``; a page may be short or empty before the last. ``from_`` (default 30 days
        back) is inclusive, ``to`` (default none) exclusive: ISO 8601, or a ``datetime`` (a naive one
        is UTC). ``start_key`` resumes after a page.
        """
        query = _without_none(
            **{"from": _moment(from_), "to": _moment(to)},
            phoneNumber=phone_number,
            kind=kind,
            outcome=outcome,
            reasonCode=reason_code,
            clientRequestId=client_request_id,
            limit=limit,
            startKey=start_key,
        )
        return self._decision_pages(query)

    def _decision_pages(self, query: dict[str, Any]) -> Iterator[DecisionSummaryItem]:
        while True:
            page = self._call("GET", "/v3/decisions", DecisionListResponse, query=query)
            yield from page.results or []
            if page.lastKey is None:
                return
            query = {**query, "startKey": page.lastKey}

    def get_decision(self, decision_id: str, *, client_request_id: str | None = None) -> DecisionView:
        """``GET /v3/decisions/{id}``: one decision whole (the id of a batch item or a Connect row has
        a ``#``: it is encoded here)."""
        query = _without_none(clientRequestId=client_request_id)
        return self._call("GET", f"/v3/decisions/{_segment(decision_id)}", DecisionView, query=query)

    def summarise_decisions(
        self,
        *,
        from_: date | str | None = None,
        to: date | str | None = None,
        client_request_id: str | None = None,
    ) -> DecisionSummaryResponse:
        """``GET /v3/decisions/summary``: the days ``from_`` to ``to`` (both inclusive, at most 366;
        default the last 30) counted: outcomes, reason codes, kinds, each day, and conversion."""
        query = _without_none(**{"from": _day(from_), "to": _day(to)}, clientRequestId=client_request_id)
        return self._call("GET", "/v3/decisions/summary", DecisionSummaryResponse, query=query)

    def erase_decisions(
        self, phone_number: str, *, client_request_id: str | None = None
    ) -> DecisionEraseResponse:
        """``DELETE /v3/decisions?phoneNumber=``: the client's records of the number are erased."""
        query = _without_none(phoneNumber=phone_number, clientRequestId=client_request_id)
        return self._call("DELETE", "/v3/decisions", DecisionEraseResponse, query=query)

    # --- The exchange ---

    def _call(
        self,
        method: str,
        path: str,
        answer: type[Answer],
        body: BaseModel | Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        *,
        query: Mapping[str, Any] | None = None,
    ) -> Answer:
        headers = {"User-Agent": USER_AGENT}
        if idempotency_key is not None:
            headers[IDEMPOTENCY_HEADER] = idempotency_key
        json_body = _json(body) if method == "POST" else None
        token = self._tokens.current()
        response = self._send(method, path, token, headers, json_body, query)
        if response.status_code == 401:
            # The token was refused before its time (revoked, or the signing keys rotated): a new one,
            # once. The authorizer refused the request, so nothing ran and sending it again is safe.
            response = self._send(method, path, self._tokens.renew(token), headers, json_body, query)
        if response.status_code != 200:
            raise error_from_response(response)
        return answer.model_validate(response.json())

    def _send(
        self,
        method: str,
        path: str,
        token: str,
        headers: Mapping[str, str],
        json_body: dict[str, Any] | None,
        query: Mapping[str, Any] | None,
    ) -> httpx.Response:
        return self._http.request(
            method,
            self._base_url + path,
            headers={**headers, "Authorization": f"Bearer {token}"},
            json=json_body,
            params=dict(query) if query else None,
        )


def _json(body: BaseModel | Mapping[str, Any] | None) -> dict[str, Any]:
    """The body as the API reads it: only the fields set, none of them null."""
    if isinstance(body, BaseModel):
        dumped: dict[str, Any] = body.model_dump(mode="json", exclude_unset=True, exclude_none=True)
        return dumped
    return dict(body or {})


def _correlation(correlation_id: str, client_request_id: str | None) -> dict[str, Any]:
    return _without_none(correlationId=correlation_id, clientRequestId=client_request_id)


def _without_none(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def _moment(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _day(value: date | str | None) -> str | None:
    if isinstance(value, datetime):
        return value.date().isoformat()
    return value.isoformat() if isinstance(value, date) else value


def _segment(value: str) -> str:
    """A path segment: ``+`` of a phone number as ``%2B``, and nothing that could leave the path."""
    return quote(value, safe="")
