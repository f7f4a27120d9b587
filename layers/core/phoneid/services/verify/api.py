"""/v3/verify and /v3/verify/batch: the request's items read, each verified, the answers shaped."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger
from pydantic import ValidationError

from phoneid.api.errors import from_validation
from phoneid.api.verify_models import (
    VerifyBatchRequest,
    VerifyBatchResponse,
    VerifyBatchResult,
    VerifyFields,
    VerifyRequest,
    VerifyResponse,
)
from phoneid.domain.clients import Caller
from phoneid.domain.decisions import DecisionRecord, Kind
from phoneid.domain.errors import MalformedRequest, PhoneIdError
from phoneid.domain.verification import VerificationType, VerifyItem
from phoneid.ports import Clock
from phoneid.services.decision_log import DecisionLog
from phoneid.services.verify.answers import answer, business_out
from phoneid.services.verify.verifier import Verified, Verifier

logger = Logger(child=True)


def item_of(fields: VerifyFields) -> VerifyItem:
    return VerifyItem(
        phone_number=fields.phoneNumber,
        verification_type=VerificationType(fields.verificationType),
        first_name=fields.firstName,
        last_name=fields.lastName,
        email=fields.emailAddress,
        client_customer_id=fields.clientCustomerId,
        client_human_id=fields.clientHumanId,
        attributes=tuple((a.attributeType, a.attributeValue) for a in fields.identityAttributes or ()),
    )


class VerifyService(Verifier):
    """/v3/verify and /v3/verify/batch, answered from the verifier's one code path; each answer's
    decisions kept (``decisions``) before it leaves."""

    def __init__(self, *, decisions: DecisionLog, clock: Clock, **parts: Any) -> None:
        super().__init__(**parts)
        self.decisions = decisions
        self._clock = clock

    def verify(self, caller: Caller, request: VerifyRequest) -> VerifyResponse:
        started = self._clock.now()
        correlation_id = str(uuid.uuid4())
        item = item_of(request)
        try:
            verified = self.verify_item(caller, item)
        except PhoneIdError as refused:
            self._keep(
                caller, [(correlation_id, refused, item.phone_number)], started, request.clientRequestId
            )
            raise
        self._keep(caller, [(correlation_id, verified, None)], started, request.clientRequestId)
        return VerifyResponse(
            **answer(verified),
            correlationId=correlation_id,
            clientRequestId=request.clientRequestId,
            clientCustomerId=request.clientCustomerId,
            clientHumanId=request.clientHumanId,
            businesses=[business_out(b) for b in verified.businesses] or None,
        )

    def verify_batch(self, caller: Caller, request: VerifyBatchRequest) -> VerifyBatchResponse:
        """One result per item, in order; an item that cannot be verified carries its own error."""
        started = self._clock.now()
        correlation_id = str(uuid.uuid4())
        refused: list[int] = []  # the items that are no valid item
        results: list[VerifyBatchResult | None] = []
        valid: list[tuple[int, VerifyItem, dict[str, str | None]]] = []
        for raw in request.items:
            phone = raw.get("phoneNumber") if isinstance(raw, dict) else None
            echo = {
                "phoneNumber": phone if isinstance(phone, str) and len(phone) <= 32 else "",
                "clientCustomerId": _short(raw, "clientCustomerId"),
                "clientHumanId": _short(raw, "clientHumanId"),
            }
            try:
                item = item_of(VerifyFields.model_validate(raw))
            except ValidationError as invalid:
                refused.append(len(results))
                results.append(
                    VerifyBatchResult(success="false", assuranceLevel="AL-1", error=_message(invalid), **echo)
                )
                continue
            valid.append((len(results), item, echo))
            results.append(None)
        verified = self.verify_many(caller, [item for _, item, _ in valid])
        decided = [
            (f"{correlation_id}#{index}", outcome, item.phone_number)
            for (index, item, _), outcome in zip(valid, verified, strict=True)
        ]
        self._keep(caller, decided, started, request.clientRequestId, refused=refused, batch=correlation_id)
        for (index, _, echo), outcome in zip(valid, verified, strict=True):
            results[index] = (
                VerifyBatchResult(success="false", assuranceLevel="AL-1", error=outcome.message, **echo)
                if isinstance(outcome, PhoneIdError)
                else VerifyBatchResult(
                    **answer(outcome),
                    assuranceLevel=outcome.assurance.level,
                    clientCustomerId=echo["clientCustomerId"],
                    clientHumanId=echo["clientHumanId"],
                )
            )
        answered = [result for result in results if result is not None]
        logger.info(
            "batch verified",
            extra={"items": len(answered), "errors": sum(1 for r in answered if r.error is not None)},
        )
        return VerifyBatchResponse(
            correlationId=correlation_id, clientRequestId=request.clientRequestId, results=answered
        )

    def _keep(
        self,
        caller: Caller,
        decided: Sequence[tuple[str, Verified | PhoneIdError, str | None]],
        started: datetime,
        client_request_id: str | None,
        *,
        refused: list[int] | None = None,
        batch: str | None = None,
    ) -> None:
        """The decisions' records: one per item, the batch's counted once under its correlationId."""
        ended = self._clock.now()
        kind = Kind.VERIFY if batch is None else Kind.VERIFY_BATCH
        invalid = [f"{batch}#{index}" for index in refused or ()]

        def records() -> list[DecisionRecord]:
            refusals = [
                self.decisions.refused(
                    caller.client_id,
                    decision_id,
                    kind,
                    MalformedRequest.code,
                    flow=None,
                    started_at=started,
                    ended_at=ended,
                    client_request_id=client_request_id,
                )
                for decision_id in invalid
            ]
            return refusals + [
                self.decisions.of_verification(
                    caller.client_id,
                    decision_id,
                    kind,
                    outcome,
                    flow=outcome.item.verification_type.value if isinstance(outcome, Verified) else None,
                    started_at=started,
                    ended_at=ended,
                    client_request_id=client_request_id,
                    phone_number=phone_number,
                )
                for decision_id, outcome, phone_number in decided
            ]

        ids = invalid + [decision_id for decision_id, _, _ in decided]
        self.decisions.keep(ids, records, once=batch)


def _short(raw: Any, name: str) -> str | None:
    value = raw.get(name) if isinstance(raw, dict) else None
    return value if isinstance(value, str) and 0 < len(value) <= 128 else None


def _message(invalid: ValidationError) -> str:
    return from_validation(invalid.errors()).message
