"""Identity Manager: enroll, list, read, look up, activate, deactivate and disenroll identities.

Every operation is the caller's (tenant's) own: an identity of another client, an unknown id, a
malformed id and a disenrolled identity all answer 8011, so no answer tells them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote

from aws_lambda_powertools import Logger
from pydantic import ValidationError

from phoneid.api.errors import from_validation
from phoneid.api.identity_models import (
    BatchResponse,
    BatchResult,
    EnrollFields,
    EnrollResponse,
    IdentityBatchItem,
    IdentityBatchRequest,
    IdentityListResponse,
    IdentitySummary,
    IdentityView,
    LookupResponse,
    SuccessResponse,
)
from phoneid.domain.clients import Caller
from phoneid.domain.enrollment import Action, Enrollment, IdentityAttribute, Pii, new_service_id
from phoneid.domain.errors import IdentityNotFound, PhoneIdError
from phoneid.domain.lists import number_line_type
from phoneid.domain.phone import PhoneNumber, Region, mask
from phoneid.domain.phone_access import checked_phone
from phoneid.ports import Clock, EnrollmentStore, KeyedDigest
from phoneid.services.monitor import MONITORED_COUNTRIES
from phoneid.services.page_keys import PageKeys

if TYPE_CHECKING:
    from phoneid.services.push import PushSubscriptions

# Logs name serviceIds and masked numbers only: never names, attributes or customer ids.
logger = Logger(child=True)


class Enrolled(NamedTuple):
    service_id: str
    existed: bool  # True: the identity was enrolled before and is returned as it is


class Enrollee(NamedTuple):
    """Who is to be enrolled: the number (as given, or as a verification of this caller already
    checked it), the client's customer id, the PII to seal."""

    phone: str | PhoneNumber
    client_customer_id: str | None
    pii: Pii


def _enrollee(fields: EnrollFields) -> Enrollee:
    return Enrollee(
        fields.phoneNumber,
        fields.clientCustomerId,
        Pii(
            first_name=fields.firstName,
            last_name=fields.lastName,
            client_human_id=fields.clientHumanId,
            device_id=fields.deviceId,
            attributes=tuple(
                IdentityAttribute(a.attributeType, a.attributeValue) for a in fields.identityAttributes or ()
            ),
        ),
    )


class IdentityManager:
    def __init__(
        self,
        *,
        store: EnrollmentStore,
        clock: Clock,
        region: Region,
        page_mac: KeyedDigest,
        push: PushSubscriptions | None = None,
    ) -> None:
        self._store = store
        # The operator's subscriptions, when it offers them: made on enrollment and activation,
        # deleted on deactivation and disenrollment (docs/webhooks.md#push-before-poll).
        self._push = push
        self._clock = clock
        self._region = region
        self._page_keys = PageKeys(page_mac)  # lastKey / startKey, bound to the client

    # --- enroll ------------------------------------------------------------------------------

    def enroll(self, caller: Caller, request: EnrollFields) -> EnrollResponse:
        enrolled = self._enroll_fields(caller, request)
        self._subscribe(caller.client_id, enrolled.service_id)
        return EnrollResponse(serviceId=enrolled.service_id)

    def enroll_batch(self, caller: Caller, request: IdentityBatchRequest) -> BatchResponse:
        """One result per item, in order; an item's error does not stop the others."""
        results: list[BatchResult | None] = []
        valid: list[tuple[int, Enrollee]] = []
        for entry in request.items:
            try:
                item = (
                    entry if isinstance(entry, IdentityBatchItem) else IdentityBatchItem.model_validate(entry)
                )
            except ValidationError as invalid:
                results.append(BatchResult(error=from_validation(invalid.errors()).message))
                continue
            valid.append((len(results), _enrollee(item)))
            results.append(None)
        enrolled = self.enroll_many(caller, [enrollee for _, enrollee in valid])
        for (index, _), outcome in zip(valid, enrolled, strict=True):
            results[index] = (
                BatchResult(error=outcome.message)
                if isinstance(outcome, PhoneIdError)
                else BatchResult(serviceId=outcome.service_id)
            )
        answered = [result for result in results if result is not None]
        logger.info(
            "batch enrolled",
            extra={"items": len(answered), "errors": sum(1 for r in answered if r.error is not None)},
        )
        return BatchResponse(results=answered)

    def enroll_many(self, caller: Caller, enrollees: Sequence[Enrollee]) -> list[Enrolled | PhoneIdError]:
        """Each enrollee enrolled (or found enrolled), in order, as if one after another, in a few
        AWS calls for all: a Connect chunk's or a batch's passing rows. An enrollee's error is its
        result."""
        results: list[Enrolled | PhoneIdError | None] = [None] * len(enrollees)
        candidates: list[tuple[int, Enrollment]] = []
        now = self._clock.now()
        for index, enrollee in enumerate(enrollees):
            try:
                phone = (
                    enrollee.phone
                    if isinstance(enrollee.phone, PhoneNumber)
                    else checked_phone(caller, enrollee.phone, self._region)
                )
            except PhoneIdError as error:
                results[index] = error
                continue
            candidate = Enrollment(
                client_id=caller.client_id,
                service_id=new_service_id(),
                phone_number=phone.e164,
                country=phone.country,
                created_at=now,
                client_customer_id=enrollee.client_customer_id,
                pii=enrollee.pii,
            )
            candidates.append((index, candidate))
        stored = self._store.enroll_many([candidate for _, candidate in candidates])
        for (index, _), outcome in zip(candidates, stored, strict=True):
            if isinstance(outcome, PhoneIdError):
                results[index] = outcome
                continue
            identity, created = outcome
            logger.info(
                "enrolled" if created else "already enrolled",
                extra={"serviceId": identity.service_id, "phone": mask(identity.phone_number)},
            )
            results[index] = Enrolled(identity.service_id, existed=not created)
        return [result for result in results if result is not None]

    def _enroll_fields(self, caller: Caller, fields: EnrollFields) -> Enrolled:
        [outcome] = self.enroll_many(caller, [_enrollee(fields)])
        if isinstance(outcome, PhoneIdError):
            raise outcome
        return outcome

    # --- read --------------------------------------------------------------------------------

    def list_page(
        self, caller: Caller, *, limit: int, start_key: str | None = None, show_inactive: bool = False
    ) -> IdentityListResponse:
        after = self._page_keys.opened(caller.client_id, start_key) if start_key is not None else None
        page = self._store.page(caller.client_id, limit=limit, after=after, include_inactive=show_inactive)
        last = page.last_position
        return IdentityListResponse(
            results=[
                IdentitySummary(
                    serviceId=e.service_id,
                    phoneNumber=e.phone_number,
                    clientCustomerId=e.client_customer_id,
                    active=e.active,
                )
                for e in page.items
            ],
            lastKey=self._page_keys.seal(caller.client_id, last) if last is not None else None,
        )

    def get(self, caller: Caller, service_id: str) -> IdentityView:
        enrollment = self._store.get(caller.client_id, service_id)
        if enrollment is None:
            raise IdentityNotFound()
        return view(enrollment)

    def lookup(self, caller: Caller, phone_text: str) -> LookupResponse:
        """The caller's identities of a number (the path may carry ``+`` percent-encoded)."""
        phone = checked_phone(caller, unquote(phone_text), self._region)
        found = self._store.by_phone(caller.client_id, phone.e164)
        if not found:
            raise IdentityNotFound()
        return LookupResponse(items=[view(e) for e in found])

    # --- change ------------------------------------------------------------------------------

    def activate(self, caller: Caller, service_id: str) -> SuccessResponse:
        return self._apply(caller, service_id, Action.ACTIVATE)

    def deactivate(self, caller: Caller, service_id: str) -> SuccessResponse:
        return self._apply(caller, service_id, Action.DEACTIVATE)

    def disenroll(self, caller: Caller, service_id: str) -> SuccessResponse:
        return self._apply(caller, service_id, Action.DISENROLL)

    def _apply(self, caller: Caller, service_id: str, action: Action) -> SuccessResponse:
        changed = self._store.apply(caller.client_id, service_id, action, self._clock.now())
        if changed is None:
            raise IdentityNotFound()
        logger.info("identity changed", extra={"serviceId": service_id, "status": changed.status.value})
        if action is Action.ACTIVATE:
            self._subscribe(caller.client_id, service_id)
        elif self._push is not None:
            try:
                self._push.unsubscribe(caller.client_id, service_id)
            except Exception as error:  # the change is made; its notifications are then ignored
                logger.warning(
                    "push subscriptions not deleted",
                    extra={"serviceId": service_id, "error_type": type(error).__name__},
                )
        return SuccessResponse()

    def _subscribe(self, client_id: str, service_id: str) -> None:
        """Subscriptions for an active US identity (the numbers the monitor watches); a failure is
        logged, never the caller's: the monitor's next pass subscribes."""
        if self._push is None:
            return
        try:
            enrollment = self._store.get(client_id, service_id, with_pii=False)
            if enrollment is not None and enrollment.active and enrollment.country in MONITORED_COUNTRIES:
                self._push.subscribe(enrollment)
        except Exception as error:
            failed = {"serviceId": service_id, "error_type": type(error).__name__}
            logger.warning("push subscriptions not made", extra=failed)


def view(enrollment: Enrollment) -> IdentityView:
    """An identity as GET and lookup return it."""
    pii = enrollment.pii or Pii()
    line_type = number_line_type(enrollment.phone_number)
    created = enrollment.created_at.astimezone(UTC)
    return IdentityView(
        serviceId=enrollment.service_id,
        phoneNumber=enrollment.phone_number,
        active=enrollment.active,
        lineType=None if line_type == "unknown" else line_type,
        countryCode=enrollment.country,
        clientCustomerId=enrollment.client_customer_id,
        clientHumanId=pii.client_human_id,
        deviceId=pii.device_id,
        createdAt=int(created.timestamp()),
        creationString=created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
