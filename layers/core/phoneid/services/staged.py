"""The staged flow: /v3/start, /v3/validate, /v3/challenge, /v3/complete."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

from aws_lambda_powertools import Logger

from phoneid.api.models import CategoryResult
from phoneid.api.staged_models import (
    AddressModel,
    ChallengeRequest,
    ChallengeResponse,
    CompleteRequest,
    CompleteResponse,
    IndividualOut,
    StartRequest,
    StartResponse,
    ValidateResponse,
)
from phoneid.domain import tokens
from phoneid.domain.clients import Caller, Tier
from phoneid.domain.errors import MalformedRequest, SandboxUserNotFound
from phoneid.domain.evaluation import Evaluation, Observations, describe, evaluate
from phoneid.domain.flow import Step, next_map
from phoneid.domain.identity import Address, Claimed, Identity, match, ssn_digits
from phoneid.domain.offer import MethodOffer
from phoneid.domain.phone import PhoneNumber, Region, mask
from phoneid.domain.phone_access import checked_phone
from phoneid.domain.possession import Method, PossessionState, passed, sms_template
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import SESSION_LIFETIME, Challenge, FlowType, Possession, Session, Unify
from phoneid.domain.tokens import Audience
from phoneid.ports import Clock, IdentitySource, SessionStore, TokenSigner
from phoneid.services.decision_log import DecisionLog
from phoneid.services.policies import PolicyBook
from phoneid.services.sessions import SessionSteps, require_turn
from phoneid.services.signals import Gatherer, Subject

# Logs name the correlationId and a masked number only: never SSN, date of birth or identity data.
logger = Logger(child=True)


@dataclass(frozen=True)
class Stack:
    tier: Tier
    region: Region

    @property
    def sandbox(self) -> bool:
        return self.tier == "sandbox"


class StagedFlow:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        sessions: SessionStore,
        identities: IdentitySource,
        catalogue: Catalogue | None,
        signer: TokenSigner,
        clock: Clock,
        audience: Audience,
        signals: Gatherer,
        policies: PolicyBook,
        offer: MethodOffer,
        decisions: DecisionLog,
    ) -> None:
        self._decisions = decisions
        self._offer = offer
        self._signals = signals
        self._policies = policies
        self._steps = steps
        self._sessions = sessions
        self._identities = identities
        self._catalogue = catalogue
        self._signer = signer
        self._clock = clock
        self._audience = audience
        self.stack = Stack(audience.tier, audience.region)

    # --- start -------------------------------------------------------------------------------

    def start(self, caller: Caller, request: StartRequest, api_base: str) -> StartResponse:
        """``api_base`` is where the client SDK reaches the client API; the authToken carries it."""
        phone = self.phone_or_none(
            caller,
            request.phoneNumber,
            may_be_empty=request.flowType == "mobile" and self.stack.region == "US",
        )
        session = self.open_session(
            caller,
            phone,
            flow_type=request.flowType,
            next_step=Step.VALIDATE,
            sms_message=request.smsMessage,
            allow_otp_retry=request.allowOTPRetry,
            final_target_url=request.finalTargetUrl,
            challenge=Challenge(ssn=request.ssn and ssn_digits(request.ssn), dob=request.dob),
        )
        return StartResponse(
            authToken=self.auth_token(session, api_base),
            correlationId=session.correlation_id,
            next=next_map(Step.VALIDATE),
        )

    def open_session(
        self,
        caller: Caller,
        phone: PhoneNumber | None,
        *,
        flow_type: FlowType,
        next_step: Step,
        sms_message: str | None,
        allow_otp_retry: bool,
        final_target_url: str | None,
        challenge: Challenge | None = None,
        unify: Unify | None = None,
    ) -> Session:
        """A new session of either flow: the Sandbox test user selected, possession preset if scripted."""
        possession = PossessionState()
        scenario = None
        if self._catalogue is not None:
            user = self._catalogue.select(phone.e164 if phone else None, caller)
            scenario = user.scenario.value
            if user.possession_without_client:
                possession = passed(possession, Method.PRESET)
        template, otp_length = sms_template(sms_message)
        session = Session(
            client_id=caller.client_id,
            correlation_id=str(uuid.uuid4()),
            flow_type=flow_type,
            created_at=self._clock.now(),
            next_step=next_step,
            phone_number=phone.e164 if phone else None,
            possession=possession,
            challenge=challenge or Challenge(),
            allow_otp_retry=allow_otp_retry,
            final_target_url=final_target_url,
            sandbox_scenario=scenario,
            sms_message=template,
            otp_length=otp_length,
            unify=unify,
        )
        self._sessions.create(session)
        logger.info(
            "flow started",
            extra={
                "correlationId": session.correlation_id,
                "flow": "unify" if unify else "staged",
                "phone": mask(session.phone_number),
                "flowType": flow_type,
                "scenario": scenario,
            },
        )
        return session

    def phone_or_none(self, caller: Caller, text: str | None, *, may_be_empty: bool) -> PhoneNumber | None:
        """The request's number; an empty one only where the flow allows it (never in Sandbox)."""
        if text and text.strip():
            return self.checked_phone(caller, text)
        if self.stack.sandbox:
            raise SandboxUserNotFound(
                "No Sandbox test user matches the phone number: phoneNumber selects the test user"
            )
        if not may_be_empty:
            raise MalformedRequest(problems={"phoneNumber": "is required for this flow and region"})
        return None

    def checked_phone(self, caller: Caller, text: str) -> PhoneNumber:
        """A valid number of this stack's region that the caller may serve (8001, 8010 otherwise)."""
        return checked_phone(caller, text, self.stack.region)

    def auth_token(self, session: Session, api_base: str) -> str:
        """The flow's JWT for the client SDK: its audience and use keep it out of /v3."""
        extra: dict[str, object] = {
            "cid": session.client_id,
            "flowType": session.flow_type,
            "flow": "unify" if session.unify else "staged",
            "api": api_base,
        }
        if session.unify is None:
            # What the session offers as it starts: an SDK can begin possession at once, without a
            # first call for the session (docs/client-api.md). A unified flow's client still asks:
            # it may choose the flow type and prove a device key first.
            extra["methods"] = [method.value for method in self._offer.methods(session)]
            extra["phoneNumberNeeded"] = session.phone_number is None
        claims = tokens.claims_for(
            audience=self._audience.client_sdk,
            issuer=self._audience.issuer,
            subject=session.correlation_id,
            token_use="client",
            now=session.created_at,
            lifetime=SESSION_LIFETIME,
            extra=extra,
        )
        return tokens.encode(claims, self._signer)

    # --- validate ----------------------------------------------------------------------------

    def validate(
        self, caller: Caller, correlation_id: str, client_request_id: str | None = None
    ) -> ValidateResponse:
        def decide(session: Session) -> tuple[Session, ValidateResponse]:
            require_turn(session, Step.VALIDATE)
            success = session.possession.status == Possession.PASSED
            challenge_missing = session.challenge.missing
            following = (Step.CHALLENGE if challenge_missing else Step.COMPLETE) if success else Step.DONE
            return session.answer(Step.VALIDATE, following), ValidateResponse(
                success=success,
                challengeMissing=challenge_missing,
                phoneNumber=session.phone_number if success else None,
                next=next_map(following),
            )

        session, response = self._steps.update(caller.client_id, correlation_id, decide)
        logger.info("validated", extra={"correlationId": correlation_id, "success": response.success})
        if not response.success:  # possession failed: the flow ends here
            self.keep_ended(session, "validate", client_request_id)
        return response

    def keep_ended(self, session: Session, step: str, client_request_id: str | None) -> None:
        """The record of a flow that ended without an evaluation (possession or challenge failed)."""
        ended = self._clock.now()
        self._decisions.keep(
            [session.correlation_id],
            lambda: [
                self._decisions.of_flow(
                    session, ended_at=ended, step=step, client_request_id=client_request_id
                )
            ],
        )

    # --- challenge ---------------------------------------------------------------------------

    def challenge(self, caller: Caller, request: ChallengeRequest) -> ChallengeResponse:
        def decide(session: Session) -> tuple[Session, ChallengeResponse]:
            require_turn(session, Step.CHALLENGE)
            challenge = Challenge(
                ssn=ssn_digits(request.ssn) if request.ssn else session.challenge.ssn,
                dob=request.dob or session.challenge.dob,
            )
            if challenge.missing:
                raise MalformedRequest(
                    problems={"ssn": "ssn or dob is required", "dob": "ssn or dob is required"}
                )
            identity = self._identity(session)
            result = match(Claimed(ssn=challenge.ssn, dob=challenge.dob), identity) if identity else None
            success = identity is not None and result is not None and not result.mismatched
            following = Step.COMPLETE if success else Step.DONE
            updated = replace(session.answer(Step.CHALLENGE, following), challenge=challenge)
            return updated, ChallengeResponse(
                success=success,
                individual=self._individual(identity) if success and identity else None,
                next=next_map(following),
            )

        session, response = self._steps.update(caller.client_id, request.correlationId, decide)
        logger.info("challenged", extra={"correlationId": request.correlationId, "success": response.success})
        if not response.success:
            self.keep_ended(session, "challenge", request.clientRequestId)
        return response

    def _identity(self, session: Session) -> Identity | None:
        return self._identities.find(session.phone_number) if session.phone_number else None

    def _individual(self, identity: Identity) -> IndividualOut:
        return IndividualOut(
            firstName=identity.first_name,
            lastName=identity.last_name,
            addresses=[
                AddressModel(address=a.address, city=a.city, region=a.region, postalCode=a.postal_code)
                for a in identity.addresses
            ],
            # Sandbox returns the full SSN; production returns its last four only.
            ssn=identity.ssn if self.stack.sandbox else identity.ssn[-4:],
            dob=identity.dob,
            emailAddresses=list(identity.email_addresses),
        )

    # --- complete ----------------------------------------------------------------------------

    def complete(self, caller: Caller, request: CompleteRequest) -> CompleteResponse:
        policy = self._policies.for_client(caller.client_id)
        gathered: dict[str, Observations] = {}

        def decide(session: Session) -> tuple[Session, Evaluation]:
            require_turn(session, Step.COMPLETE)
            if "observations" not in gathered:  # at most once, even when the write is retried
                gathered["observations"] = self._signals.gather(
                    self._subject(caller, session, request), policy
                )
            evaluation = evaluate(gathered["observations"], policy, "complete")
            return session.answer(Step.COMPLETE, Step.DONE), evaluation

        session, evaluation = self._steps.update(caller.client_id, request.correlationId, decide)
        ended = self._clock.now()
        self._decisions.keep(
            [session.correlation_id],
            lambda: [
                self._decisions.of_flow(
                    session,
                    ended_at=ended,
                    step="complete",
                    client_request_id=request.clientRequestId,
                    evaluation=evaluation,
                    observations=gathered["observations"],
                    policy=policy,
                )
            ],
        )
        logger.info(
            "completed",
            extra={
                "correlationId": request.correlationId,
                "success": evaluation.passed,
                "reasons": sorted(evaluation.codes),
                "monitored": list(evaluation.monitored),
            },
        )
        return CompleteResponse(
            success=evaluation.passed,
            next=next_map(Step.DONE),
            evaluation=wire_evaluation(evaluation),
        )

    def _subject(self, caller: Caller, session: Session, request: CompleteRequest) -> Subject:
        """What complete evaluates: possession, the individual against the records, and the number."""
        individual = request.individual
        identity = self._identity(session)
        claimed = Claimed(
            first_name=individual.firstName,
            last_name=individual.lastName,
            dob=individual.dob or session.challenge.dob,
            ssn=ssn_digits(individual.ssn) if individual.ssn else session.challenge.ssn,
            addresses=tuple(
                Address(address=a.address, city=a.city, region=a.region, postal_code=a.postalCode)
                for a in individual.addresses or ()
            ),
        )
        emails = individual.emailAddresses or []
        return Subject(
            flow="complete",
            client_id=caller.client_id,
            phone_number=session.phone_number,
            possession=session.possession.status,
            identity_checked=True,
            identity=identity,
            match=match(claimed, identity) if identity else None,
            claimed=claimed,
            email=emails[0] if emails else None,
            attributes=tuple(f"email:{email.casefold()}" for email in emails),
        )


def wire_evaluation(evaluation: Evaluation) -> dict[str, CategoryResult]:
    return {
        category.value: CategoryResult(
            result="fail" if reasons else "pass",
            failureReasons={str(code): describe(code) for code in reasons} or None,
        )
        for category, reasons in evaluation.results.items()
    }
