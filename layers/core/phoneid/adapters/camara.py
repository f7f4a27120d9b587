"""Mobile Auth through an operator's CAMARA Number Verification API.

OpenID Connect authorization code flow with network-based authentication: the customer's device
fetches the operator's authorize URL over its mobile data connection, the operator recognises the
SIM and redirects to our callback with a code; we exchange the code for an access token and ask
``POST /verify`` whether the number is the device's (``devicePhoneNumberVerified``), or
``GET /device-phone-number`` which number it is when the customer gave none.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from phoneid.domain.carrier import CarrierResult, Redirect

SCOPE = "openid dpv:FraudPreventionAndDetection number-verification:verify"
_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class OperatorConfig:
    authorize_url: str
    token_url: str
    api_base_url: str  # .../number-verification/v2
    client_id: str
    client_secret: str


class OperatorError(Exception):
    """The operator refused or could not be reached; Mobile Auth then counts as failed."""


def _request(url: str, *, data: bytes | None = None, headers: Mapping[str, str]) -> Any:
    if not url.startswith(("https://", "http://")):
        raise OperatorError("operator URLs must be http(s)")
    request = urllib.request.Request(  # noqa: S310 - scheme checked above
        url, data=data, headers=dict(headers), method="POST" if data else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS) as response:  # noqa: S310
            return json.loads(response.read() or b"{}")
    except (urllib.error.URLError, TimeoutError, ValueError) as error:
        raise OperatorError(f"operator call failed: {type(error).__name__}") from None


class CamaraCarrierVerifier:
    def __init__(self, config: Callable[[], OperatorConfig]) -> None:
        # Credentials are read (from Secrets Manager) on first use, not at construction.
        self._config = config

    def begin(self, *, state: str, redirect_uri: str, phone_number: str | None) -> Redirect:
        config = self._config()
        query = {
            "response_type": "code",
            "client_id": config.client_id,
            "redirect_uri": redirect_uri,
            "scope": SCOPE,
            "state": state,
        }
        if phone_number:
            query["login_hint"] = f"tel:{phone_number}"
        return Redirect(url=f"{config.authorize_url}?{urllib.parse.urlencode(query)}")

    def finish(self, *, code: str, redirect_uri: str, phone_number: str | None) -> CarrierResult:
        config = self._config()
        basic = base64.b64encode(f"{config.client_id}:{config.client_secret}".encode()).decode()
        try:
            token = _request(
                config.token_url,
                data=urllib.parse.urlencode(
                    {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
                ).encode(),
                headers={
                    "Authorization": f"Basic {basic}",
                    "Content-Type": "application/x-www-form-urlencoded",
                },
            )
            bearer = {"Authorization": f"Bearer {token['access_token']}", "Content-Type": "application/json"}
            if phone_number:
                verified = _request(
                    f"{config.api_base_url}/verify",
                    data=json.dumps({"phoneNumber": phone_number}).encode(),
                    headers=bearer,
                )
                return CarrierResult(
                    verified=verified.get("devicePhoneNumberVerified") is True, phone_number=phone_number
                )
            device = _request(f"{config.api_base_url}/device-phone-number", headers=bearer)
            number = device.get("devicePhoneNumber")
            return CarrierResult(
                verified=isinstance(number, str), phone_number=number if isinstance(number, str) else None
            )
        except (OperatorError, KeyError, TypeError):
            return CarrierResult(verified=False, phone_number=phone_number)
