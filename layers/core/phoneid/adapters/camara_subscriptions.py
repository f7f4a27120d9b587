"""The operator's CAMARA subscriptions APIs: SIM Swap Subscriptions (v0.3), Device Reachability
Status Subscriptions and Device Roaming Status Subscriptions (v0.7), through the same 2-legged token
as the signals (:class:`CamaraNetworkClient`).

``POST {apiRoot}/<api>/<version>/subscriptions`` with an HTTP ``sink``, a ``sinkCredential`` of type
``ACCESSTOKEN`` (the bearer token the operator sends back with each notification), one event type,
the phone number in ``config.subscriptionDetail`` and a ``subscriptionExpireTime``; the answer (201,
or 202 when the operator creates it later) names the subscription's ``id`` and maybe ``expiresAt``.
``DELETE .../subscriptions/{id}`` ends one. Phone numbers never appear in logs or errors.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote

from phoneid.adapters.camara_signals import CamaraNetworkClient, CamaraRefused
from phoneid.domain.push import SUBSCRIBED_TYPE, PushSignal
from phoneid.domain.signals import SignalSourceError

PATHS: Final = {
    PushSignal.SIM_SWAP: "/sim-swap-subscriptions/v0.3/subscriptions",
    PushSignal.REACHABILITY: "/device-reachability-status-subscriptions/v0.7/subscriptions",
    PushSignal.ROAMING: "/device-roaming-status-subscriptions/v0.7/subscriptions",
}
API: Final = {
    PushSignal.SIM_SWAP: "SIM Swap Subscriptions",
    PushSignal.REACHABILITY: "Device Reachability Status Subscriptions",
    PushSignal.ROAMING: "Device Roaming Status Subscriptions",
}


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def subscription_request(
    signal: PushSignal, phone_number: str, *, sink: str, token: str, expires_at: datetime
) -> dict[str, Any]:
    # SIM Swap names the number directly; Device Status names a device (by its number).
    subject: dict[str, Any] = (
        {"phoneNumber": phone_number}
        if signal is PushSignal.SIM_SWAP
        else {"device": {"phoneNumber": phone_number}}
    )
    return {
        "protocol": "HTTP",
        "sink": sink,
        "sinkCredential": {
            "credentialType": "ACCESSTOKEN",
            "accessToken": token,
            "accessTokenExpiresUtc": _rfc3339(expires_at),
            "accessTokenType": "bearer",
        },
        "types": [SUBSCRIBED_TYPE[signal]],
        "config": {"subscriptionDetail": subject, "subscriptionExpireTime": _rfc3339(expires_at)},
    }


class CamaraSubscriptions:
    def __init__(self, client: CamaraNetworkClient) -> None:
        self._client = client

    def create(
        self, signal: PushSignal, phone_number: str, *, sink: str, token: str, expires_at: datetime
    ) -> tuple[str, datetime | None]:
        body = subscription_request(signal, phone_number, sink=sink, token=token, expires_at=expires_at)
        answer = self._client.post(API[signal], PATHS[signal], body)
        identifier = answer.get("id") if answer else None
        if not isinstance(identifier, str) or not identifier:
            raise SignalSourceError(f"CAMARA {API[signal]}: no subscription id in the answer")
        until = answer.get("expiresAt") if answer else None
        try:
            expires = datetime.fromisoformat(until) if isinstance(until, str) else None
        except ValueError:
            expires = None
        if expires is not None and expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)
        return identifier, expires

    def delete(self, signal: PushSignal, subscription_id: str) -> None:
        path = f"{PATHS[signal]}/{quote(subscription_id, safe='')}"
        try:
            self._client.post(API[signal], path, None, method="DELETE")
        except CamaraRefused as error:
            if error.status not in (404, 410):  # already gone is what was asked
                raise
