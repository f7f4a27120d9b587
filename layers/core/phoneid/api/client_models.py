"""Request and response bodies of the client API (``/client/v1/...``), called by the SDK with the
flow's authToken."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from phoneid.api.models import DeviceId, PhoneNumber, RequestModel, ResponseModel, ShortText


class PhoneNumberRequest(RequestModel):
    phoneNumber: PhoneNumber | None = None


class OtpRequest(RequestModel):
    otp: Annotated[str, Field(pattern=r"^[0-9]{4,6}$")]


class OtpView(ResponseModel):
    length: int
    sent: bool
    sendsLeft: int
    entriesLeft: int
    expiresAt: str | None = None


class InstantLinkView(ResponseModel):
    sent: bool
    sendsLeft: int
    expiresAt: str | None = None
    websocketUrl: str | None = None


class MobileAuthView(ResponseModel):
    status: Literal["not-tried", "redirect", "passed", "failed"]
    url: str | None = None


class ClientSession(ResponseModel):
    """What the client SDK needs to run possession for one flow."""

    correlationId: str
    flowType: Literal["desktop", "mobile"]
    status: Literal["pending", "passed", "failed"]
    phoneNumberNeeded: bool
    numberChangeAllowed: bool
    methods: list[Literal["mobile-auth", "otp", "instant-link"]]
    mobileAuth: MobileAuthView | None = None
    otp: OtpView | None = None
    instantLink: InstantLinkView | None = None
    deviceKey: DeviceKeyView | None = None
    lastError: str | None = None
    expiresAt: str


# --- device keys ----------------------------------------------------------------------------------


class KeyProofRequest(RequestModel):
    deviceId: DeviceId
    signature: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9_-]{80,90}$", description="base64url r||s over the nonce")
    ]
    publicApiKey: ShortText | None = Field(default=None, description="web SDKs: the client's public API key")


class KeyRegistrationRequest(RequestModel):
    publicKey: dict[str, str] = Field(description="P-256 public JWK")
    signature: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{80,90}$")]
    publicApiKey: ShortText | None = None


class KeyRegistrationResponse(ResponseModel):
    deviceId: str


class DeviceKeyView(ResponseModel):
    nonce: str
    deviceId: str | None = None  # the registration the integrator asked for
    registerKey: bool  # register a new key once possession passes


class FlowChoice(RequestModel):
    flowType: Literal["desktop", "mobile"] | None = None


ClientSession.model_rebuild()
