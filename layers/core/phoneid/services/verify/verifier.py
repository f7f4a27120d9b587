"""The one code path of every verification (``verify_item``), shared by the single call, the batch
and Connect rows: the number is checked, the person matched against the identity records, every
signal the policy needs gathered, the policy evaluated, and a pass enrolled in Identity Manager
unless the operator turned automatic enrollment off for the client.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from aws_lambda_powertools import Logger

from phoneid.domain.clients import Caller, Flag
from phoneid.domain.enrollment import IdentityAttribute, Pii
from phoneid.domain.errors import PhoneIdError
from phoneid.domain.evaluation import Assurance, Evaluation, Observations, assess, evaluate
from phoneid.domain.identity import Business, Claimed, Identity, match
from phoneid.domain.phone import PhoneNumber, Region, mask
from phoneid.domain.phone_access import checked_phone
from phoneid.domain.policy import Policy
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.verification import Label, VerifyItem, decide, matched_identity, ranked_businesses
from phoneid.ports import IdentitySource, KeyedDigest
from phoneid.services.identity_manager import Enrolled, Enrollee, IdentityManager
from phoneid.services.policies import PolicyBook
from phoneid.services.pools import submit_in_context
from phoneid.services.signals import Gatherer, Subject

logger = Logger(child=True)

# Items of a batch (or a Connect chunk) decided at once, when deciding waits on upstream sources;
# each item's sources run in the signals pool.
ITEM_WORKERS = 8


@dataclass(frozen=True)
class Verified:
    """Everything one verification decided: the API, its batch and Connect shape it their own way."""

    item: VerifyItem
    phone_number: str
    success: bool
    label: Label
    evaluation: Evaluation
    assurance: Assurance
    identity: Identity | None
    service_id: str | None
    phone_alias: str
    businesses: tuple[Business, ...]
    po_boxes: bool
    observations: Observations  # what the policy evaluated (the decision record keeps it)
    policy: Policy
    country: str  # the number's, as parsed (the decision record shows it)

    @property
    def enrolled(self) -> bool:
        return self.service_id is not None


class Verifier:
    """The one code path of every verification: decide each item, then enroll the passing ones."""

    def __init__(
        self,
        *,
        region: Region,
        catalogue: Catalogue | None,
        identities: IdentitySource,
        signals: Gatherer,
        policies: PolicyBook,
        identity_manager: IdentityManager,
        aliases: KeyedDigest,
        item_workers: int = ITEM_WORKERS,
    ) -> None:
        self._region = region
        self._catalogue = catalogue
        self._identities = identities
        self._signals = signals
        self._policies = policies
        self._identity_manager = identity_manager
        self._aliases = aliases
        self._item_workers = item_workers

    # --- verification: decide each item, then enroll the passing ones together ------------------

    def verify_item(self, caller: Caller, item: VerifyItem) -> Verified:
        """The one code path of every verification (single, batch item, Connect row)."""
        [outcome] = self._conclude(caller, [self._decide(caller, item)])
        if isinstance(outcome, PhoneIdError):
            raise outcome
        return outcome

    def verify_many(self, caller: Caller, items: Sequence[VerifyItem]) -> list[Verified | PhoneIdError]:
        """``verify_item`` of each, in order, an item's ``PhoneIdError`` being its result: each item
        decided on its own (``item_workers`` at once), then the passing ones enrolled together. Any
        other failure stops them all (the items not yet decided are not)."""
        workers = self._item_workers
        if workers <= 1 or len(items) <= 1:
            decided = [self._decide_or_error(caller, item) for item in items]
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
                futures = [submit_in_context(pool, self._decide_or_error, caller, item) for item in items]
                try:
                    decided = [future.result() for future in futures]
                except BaseException:
                    for future in futures:  # e.g. a throttled upstream: stop asking at once
                        future.cancel()
                    raise
        concluded = iter(self._conclude(caller, [d for d in decided if isinstance(d, _Decided)]))
        return [d if isinstance(d, PhoneIdError) else next(concluded) for d in decided]

    def _decide_or_error(self, caller: Caller, item: VerifyItem) -> _Decided | PhoneIdError:
        try:
            return self._decide(caller, item)
        except PhoneIdError as error:
            return error

    def _decide(self, caller: Caller, item: VerifyItem) -> _Decided:
        """Everything but enrollment: the number checked, the person matched, the signals gathered,
        the policy evaluated."""
        phone = checked_phone(caller, item.phone_number, self._region)
        if self._catalogue is not None:
            self._catalogue.select(phone.e164, caller)  # 8007 / 8009 as everywhere in Sandbox
        identity = self._identities.find(phone.e164)
        claimed = Claimed(first_name=item.first_name, last_name=item.last_name)
        named = item.first_name is not None or item.last_name is not None
        policy = self._policies.for_client(caller.client_id)
        observations = self._signals.gather(
            Subject(
                flow="verify",
                client_id=caller.client_id,
                phone_number=phone.e164,
                identity_checked=named,
                identity=identity,
                match=match(claimed, identity) if identity and named else None,
                claimed=claimed if named else None,
                email=item.email,
                attributes=_attributes(item),
            ),
            policy,
        )
        evaluation = evaluate(observations, policy, "verify")
        success, label = decide(item.verification_type, evaluation)
        # The records' data is shown only to a caller who named this very person and passed: a
        # number alone never reveals who holds it.
        shown = success and named and identity is not None and matched_identity(evaluation)
        return _Decided(
            item=item,
            phone=phone,
            success=success,
            label=label,
            evaluation=evaluation,
            observations=observations,
            policy=policy,
            identity=identity if shown else None,
        )

    def _conclude(self, caller: Caller, decisions: Sequence[_Decided]) -> list[Verified | PhoneIdError]:
        """Enroll the passing decisions in one go (unless the operator turned automatic enrollment
        off for the client), then assess each: an enrollment's failure is its item's result."""
        enrolling = [d for d in decisions if d.success] if caller.has(Flag.AUTO_ENROLLMENT) else []
        enrolled = dict(
            zip(
                map(id, enrolling),
                self._identity_manager.enroll_many(caller, [_enrollee(d) for d in enrolling]),
                strict=True,
            )
        )
        return [self._verified(caller, decided, enrolled.get(id(decided))) for decided in decisions]

    def _verified(
        self, caller: Caller, decided: _Decided, enrolled: Enrolled | PhoneIdError | None
    ) -> Verified | PhoneIdError:
        if isinstance(enrolled, PhoneIdError):
            return enrolled
        evaluation = decided.evaluation
        logger.info(
            "verified",
            extra={
                "phone": mask(decided.phone.e164),
                "type": decided.item.verification_type.value,
                "label": decided.label.value,
                "reasons": sorted(evaluation.codes),
                "monitored": list(evaluation.monitored),
                "enrolled": enrolled is not None,
            },
        )
        identity = decided.identity
        return Verified(
            item=decided.item,
            phone_number=decided.phone.e164,
            success=decided.success,
            label=decided.label,
            evaluation=evaluation,
            assurance=assess(
                evaluation,
                decided.observations,
                enrolled_before=enrolled is not None and enrolled.existed,
                policy=decided.policy,
            ),
            identity=identity,
            service_id=enrolled.service_id if enrolled is not None else None,
            phone_alias=self._phone_alias(caller.client_id, decided.phone.e164),
            businesses=tuple(ranked_businesses(identity, decided.item.first_name, decided.item.last_name))
            if identity
            else (),
            po_boxes=caller.has(Flag.PO_BOX_ADDRESSES),
            observations=decided.observations,
            policy=decided.policy,
            country=decided.phone.country,
        )

    def _phone_alias(self, client_id: str, phone_number: str) -> str:
        """A persistent, client-scoped alias of the subscriber's number: a keyed MAC, not stored."""
        digest = self._aliases.digest(f"alias:{client_id}:{phone_number}")
        return hashlib.sha256(digest.encode()).hexdigest()[:32].upper()


@dataclass(frozen=True)
class _Decided:
    """A verification decided, before its enrollment."""

    item: VerifyItem
    phone: PhoneNumber
    success: bool
    label: Label
    evaluation: Evaluation
    observations: Observations
    policy: Policy
    identity: Identity | None  # shown to the caller: set only when it named this person and passed


def _enrollee(decided: _Decided) -> Enrollee:
    item = decided.item
    return Enrollee(
        decided.phone,
        item.client_customer_id,
        Pii(
            first_name=item.first_name,
            last_name=item.last_name,
            client_human_id=item.client_human_id,
            attributes=tuple(IdentityAttribute(kind, value) for kind, value in item.attributes),
        ),
    )


def _attributes(item: VerifyItem) -> tuple[str, ...]:
    """What ties checks of different numbers together: the client's ids for the person and the email."""
    tied = [f"attr:{kind}:{value}" for kind, value in item.attributes]
    if item.client_customer_id:
        tied.append(f"customer:{item.client_customer_id}")
    if item.client_human_id:
        tied.append(f"human:{item.client_human_id}")
    if item.email:
        tied.append(f"email:{item.email.casefold()}")
    return tuple(tied)
