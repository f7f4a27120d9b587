"""Unified authentication: /v3/unify, /v3/unify-status, /v3/unify-bind and device key revocation.

Built on the staged flow's machinery: the same session, the same possession engine (the client
API), the same conditional writes. A device key proven in the client API stands in for possession;
a key registered after possession is bound by unify-status (or unify-bind) in the same transaction
that ends the session, so racing calls bind at most one key.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import replace
from datetime import datetime

from aws_lambda_powertools import Logger

from phoneid.api.unify_models import RevokeResponse, UnifyRequest, UnifyResponse, UnifyStatusResponse
from phoneid.domain.clients import Caller
from phoneid.domain.devicekeys import DeviceKey, KeyStatus
from phoneid.domain.errors import (
    DeviceRevoked,
    IdentityNotFound,
    PossessionIncomplete,
)
from phoneid.domain.evaluation import Evaluation, Observations, evaluate
from phoneid.domain.flow import Step
from phoneid.domain.possession import Method, PossessionState, passed
from phoneid.domain.sandbox import Catalogue, Scenario
from phoneid.domain.session import Possession, Session, Unify
from phoneid.ports import Clock, CodeMac, DeviceKeyStore, SessionStore
from phoneid.services.decision_log import DecisionLog
from phoneid.services.policies import PolicyBook
from phoneid.services.sessions import SessionSteps, require_turn
from phoneid.services.signals import Gatherer, Subject
from phoneid.services.staged import StagedFlow, wire_evaluation

logger = Logger(child=True)

_HARD_FAILURES = frozenset({Scenario.HARD_FAIL_NA.value, Scenario.HARD_FAIL_INTL.value})


class UnifyFlow:
    def __init__(
        self,
        *,
        staged: StagedFlow,
        steps: SessionSteps,
        sessions: SessionStore,
        device_keys: DeviceKeyStore,
        catalogue: Catalogue | None,
        signals: Gatherer,
        policies: PolicyBook,
        mac: CodeMac,
        clock: Clock,
        decisions: DecisionLog,
    ) -> None:
        self._decisions = decisions
        self._signals = signals
        self._policies = policies
        self._staged = staged
        self._steps = steps
        self._sessions = sessions
        self._device_keys = device_keys
        self._catalogue = catalogue
        self._mac = mac
        self._clock = clock

    # --- unify -------------------------------------------------------------------------------

    def unify(self, caller: Caller, request: UnifyRequest, api_base: str) -> UnifyResponse:
        region = self._staged.stack.region
        may_be_empty = (request.possessionType == "mobile" and region == "US") or (
            request.possessionType == "none" and region == "EU"
        )
        session = self._staged.open_session(
            caller,
            self._staged.phone_or_none(caller, request.phoneNumber, may_be_empty=may_be_empty),
            flow_type="mobile",  # the client may choose desktop before possession starts
            next_step=Step.UNIFY_STATUS if request.possessionType == "mobile" else Step.UNIFY_BIND,
            sms_message=request.smsMessage,
            allow_otp_retry=request.allowOTPRetry,
            final_target_url=request.finalTargetUrl,
            unify=Unify(
                possession_type=request.possessionType,
                nonce=secrets.token_urlsafe(32),
                rebind=request.rebind,
                check_reputation=request.checkReputation,
                requested_device_id=request.deviceId,
                client_customer_id=request.clientCustomerId,
            ),
        )
        return UnifyResponse(
            authToken=self._staged.auth_token(session, api_base), correlationId=session.correlation_id
        )

    # --- unify-status and unify-bind -----------------------------------------------------------

    def status(
        self, caller: Caller, correlation_id: str, client_request_id: str | None = None
    ) -> UnifyStatusResponse:
        return self._finish(caller, correlation_id, Step.UNIFY_STATUS, client_request_id)

    def bind(
        self, caller: Caller, correlation_id: str, client_request_id: str | None = None
    ) -> UnifyStatusResponse:
        return self._finish(caller, correlation_id, Step.UNIFY_BIND, client_request_id)

    def _finish(
        self, caller: Caller, correlation_id: str, called: Step, client_request_id: str | None
    ) -> UnifyStatusResponse:
        now = self._clock.now()
        policy = self._policies.for_client(caller.client_id)
        gathered: dict[Possession, Observations] = {}
        decided: dict[str, tuple[Evaluation, PossessionState, bool]] = {}

        def observe(session: Session, state: PossessionState) -> Observations:
            """Gathered once per possession outcome, even when the write is retried."""
            if state.status not in gathered:
                gathered[state.status] = self._signals.gather(self._subject(session, state), policy)
            return gathered[state.status]

        def decide(session: Session) -> tuple[Session, tuple[UnifyStatusResponse, list[DeviceKey]]]:
            require_turn(session, called)
            unify = session.unify
            assert unify is not None  # a unify step is never the turn of a staged session
            if unify.key_revoked:
                raise DeviceRevoked()
            state = session.possession
            if called == Step.UNIFY_BIND and state.status == Possession.PENDING:
                # possessionType none: the integrator vouches for possession once a key is registered.
                if unify.registered_device_id is None and unify.proven_device_id is None:
                    raise PossessionIncomplete("No device key has been registered for this session yet")
                state = passed(state, Method.PRESET)
            if state.status == Possession.PENDING:
                raise PossessionIncomplete()
            evaluation = evaluate(observe(session, state), policy, "unify")
            answer, keys = self._outcome(session, evaluation, now)
            decided["last"] = (evaluation, state, bool(keys))  # what the written session was decided on
            return session.answer(called, Step.DONE), (answer, keys)

        session, (answer, _) = self._steps.update(
            caller.client_id, correlation_id, decide, keys=lambda result: result[1]
        )
        evaluation, state, bound = decided["last"]
        unify = session.unify
        # A proven key stood in for possession (and is only touched); any other key the answer wrote is new.
        device_key = "used" if unify and unify.proven_device_id else "bound" if bound else None
        ended = self._clock.now()
        self._decisions.keep(
            [correlation_id],
            lambda: [
                self._decisions.of_flow(
                    replace(session, possession=state),
                    ended_at=ended,
                    step=called.value,
                    client_request_id=client_request_id,
                    evaluation=evaluation,
                    observations=gathered[state.status],
                    policy=policy,
                    device_key=device_key,
                )
            ],
        )
        logger.info(
            "unify finished",
            extra={"correlationId": correlation_id, "success": answer.success, "step": called.value},
        )
        return answer

    @staticmethod
    def _subject(session: Session, state: PossessionState) -> Subject:
        """Possession and the key; with ``checkReputation``, once possession passed, every source too."""
        unify = session.unify
        assert unify is not None
        return Subject(
            flow="unify",
            client_id=session.client_id,
            phone_number=session.phone_number,
            possession=state.status,
            key_mismatch=unify.key_mismatch,
            attributes=(f"customer:{unify.client_customer_id}",) if unify.client_customer_id else (),
            ask_sources=unify.check_reputation and state.status == Possession.PASSED,
        )

    def _outcome(
        self, session: Session, evaluation: Evaluation, now: datetime
    ) -> tuple[UnifyStatusResponse, list[DeviceKey]]:
        unify = session.unify
        assert unify is not None
        if not evaluation.passed:
            return self._failure(session, evaluation), []
        keys: list[DeviceKey] = []
        device_id: str | None = None
        if session.flow_type == "mobile":
            key = self._key_to_bind(session, unify, now)
            if key is not None:
                keys.append(key)
                device_id = key.device_id
        shown = evaluation if unify.check_reputation else None
        return (
            UnifyStatusResponse(
                success=True,
                serviceId=self._service_id(session.client_id, session.phone_number or device_id or ""),
                deviceId=device_id,
                phoneNumber=session.phone_number,
                evaluation=wire_evaluation(shown) if shown else None,
            ),
            keys,
        )

    def _failure(self, session: Session, evaluation: Evaluation) -> UnifyStatusResponse:
        hard_failure = session.sandbox_scenario in _HARD_FAILURES
        return UnifyStatusResponse(
            success=False,
            phoneNumber=session.phone_number,
            # Sandbox hard failures answer with empty identifiers (docs/sandbox.md).
            serviceId="" if hard_failure else None,
            deviceId="" if hard_failure else None,
            evaluation=wire_evaluation(evaluation),
        )

    def _key_to_bind(self, session: Session, unify: Unify, now: datetime) -> DeviceKey | None:
        """The key this success binds: the proven one (touched), the rebound one, or a new one."""
        revoke_at_once = session.sandbox_scenario == Scenario.REVOKED_KEY.value
        status = KeyStatus.REVOKED if revoke_at_once else KeyStatus.ACTIVE
        existing_id = unify.proven_device_id or unify.rebind_device_id
        if existing_id is not None:
            existing = self._device_keys.get(session.client_id, existing_id)
            if existing is None:
                return None
            return replace(existing, phone_number=session.phone_number, last_used_at=now, status=status)
        if unify.registered_device_id is None or unify.registered_jwk is None:
            return None
        return DeviceKey(
            client_id=session.client_id,
            device_id=unify.registered_device_id,
            public_jwk=dict(unify.registered_jwk),
            phone_number=session.phone_number,
            status=status,
            created_at=now,
            last_used_at=now,
        )

    def _service_id(self, client_id: str, subject: str) -> str:
        """A stable, tenant-scoped identifier of the person behind a number: a keyed MAC, not stored."""
        digest = self._mac.digest(f"service:{client_id}:{subject}")
        return str(uuid.UUID(bytes=hashlib.sha256(digest.encode()).digest()[:16], version=4))

    # --- revoke ------------------------------------------------------------------------------

    def revoke(self, caller: Caller, device_id: str) -> RevokeResponse:
        if not self._device_keys.revoke(caller.client_id, device_id):
            raise IdentityNotFound("No device key with this deviceId for these credentials")
        logger.info("device key revoked", extra={"deviceId": device_id})
        return RevokeResponse(success=True, deviceId=device_id)
