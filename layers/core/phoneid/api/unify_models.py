"""Request and response bodies of unified authentication (``/v3/unify``, ``unify-status``,
``unify-bind``) and of ``/v3/device/revoke``."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StrictBool

from phoneid.api.models import (
    CORRELATION_ID_PATTERN,
    CategoryResult,
    DeviceId,
    PhoneText,
    RequestModel,
    ResponseModel,
    ShortText,
    SmsMessage,
    TargetUrl,
)
from phoneid.domain.errors import InvalidCorrelationId


class UnifyRequest(RequestModel):
    phoneNumber: PhoneText | None = None
    possessionType: Literal["mobile", "none"]
    finalTargetUrl: TargetUrl | None = None
    deviceId: DeviceId | None = None
    allowOTPRetry: StrictBool = False
    rebind: StrictBool = False
    checkReputation: StrictBool = False
    smsMessage: SmsMessage | None = None
    clientCustomerId: ShortText | None = None


class UnifyResponse(ResponseModel):
    authToken: str
    correlationId: str
    success: Literal["pending"] = "pending"


class UnifyCorrelationRequest(RequestModel):
    """unify-status and unify-bind answer a missing or malformed correlationId with 8008 (403), not 8001."""

    correlationId: Annotated[str, Field(max_length=128)] | None = None

    def required_correlation_id(self) -> str:
        if self.correlationId is None or not re.match(CORRELATION_ID_PATTERN, self.correlationId):
            raise InvalidCorrelationId()
        return self.correlationId


class UnifyStatusResponse(ResponseModel):
    success: bool
    serviceId: str | None = None
    deviceId: str | None = None
    phoneNumber: str | None = None
    evaluation: dict[str, CategoryResult] | None = None


class RevokeRequest(RequestModel):
    deviceId: DeviceId


class RevokeResponse(ResponseModel):
    success: bool
    deviceId: str
