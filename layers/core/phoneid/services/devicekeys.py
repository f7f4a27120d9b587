"""Device keys in the client API: a device proves the key it holds, or registers a new one.

A proof for the key's own number stands in for possession. A key of another number fails the
session with 9101 unless the integrator asked to rebind, in which case full possession runs and the
key moves to the new number when the flow succeeds. A revoked key gives 8019.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

from aws_lambda_powertools import Logger

from phoneid.api.client_models import (
    ClientSession,
    KeyProofRequest,
    KeyRegistrationRequest,
    KeyRegistrationResponse,
)
from phoneid.domain.clients import Flag
from phoneid.domain.devicekeys import InvalidKeyProof, KeyStatus, canonical_jwk, verify_proof
from phoneid.domain.errors import DeviceRevoked
from phoneid.domain.offer import POSSESSION_STEPS
from phoneid.domain.possession import Method, PossessionClosed, passed
from phoneid.domain.possession import failed as failed_possession
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Possession, Session, Unify
from phoneid.domain.tokens import FlowToken
from phoneid.ports import Clock, DeviceKeyStore
from phoneid.services.possession import MethodUnavailable
from phoneid.services.possession import Possession as PossessionService
from phoneid.services.sessions import SessionSteps

logger = Logger(child=True)


class KeyPersistenceDisabled(MethodUnavailable):
    default_message = "Key persistence is not enabled for these credentials"


class DeviceKeyClient:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        device_keys: DeviceKeyStore,
        catalogue: Catalogue | None,
        possession: PossessionService,
        clock: Clock,
        inactivity: timedelta,
    ) -> None:
        self._steps = steps
        self._device_keys = device_keys
        self._catalogue = catalogue
        self._possession = possession
        self._clock = clock
        self._inactivity = inactivity

    @staticmethod
    def _check_key_persistence(token: FlowToken, public_api_key: str | None) -> None:
        """Web SDKs name the client's public API key; their keys need the key-persistence add-on."""
        if public_api_key is not None and (
            not token.caller.has(Flag.KEY_PERSISTENCE) or public_api_key != token.public_api_key
        ):
            raise KeyPersistenceDisabled()

    @staticmethod
    def _open(session: Session) -> Unify:
        unify = session.unify
        if unify is None or session.next_step not in POSSESSION_STEPS:
            raise PossessionClosed("This session does not take device keys")
        if session.flow_type == "desktop":
            raise MethodUnavailable("Desktop flows ignore device keys")
        return unify

    def prove(self, token: FlowToken, request: KeyProofRequest) -> ClientSession:
        self._check_key_persistence(token, request.publicApiKey)
        now = self._clock.now()
        key = self._device_keys.get(token.client_id, request.deviceId)

        def decide(session: Session) -> tuple[Session, bool]:
            unify = self._open(session)
            session.possession.require_pending()
            # Unknown, inactive and badly signed keys look the same: no oracle for deviceIds. When the
            # integrator named the registration to recover, no other key of the browser may stand in.
            named = unify.requested_device_id
            if key is None or key.inactive(now, self._inactivity) or named not in (None, key.device_id):
                raise InvalidKeyProof()
            verify_proof(key.public_jwk, unify.nonce, request.signature)
            if key.status == KeyStatus.REVOKED:
                revoked = replace(unify, key_revoked=True)
                return replace(
                    session, unify=revoked, possession=failed_possession(session.possession, Method.PRESET)
                ), True
            number = session.phone_number or key.phone_number
            if key.phone_number is not None and number != key.phone_number:
                if unify.rebind:
                    # Full possession runs; on success this key moves to the session's number.
                    return replace(session, unify=replace(unify, rebind_device_id=key.device_id)), False
                mismatch = replace(unify, key_mismatch=True)
                return replace(
                    session, unify=mismatch, possession=failed_possession(session.possession, Method.PRESET)
                ), False
            proven = replace(unify, proven_device_id=key.device_id)
            return (
                replace(
                    session,
                    unify=proven,
                    phone_number=number,
                    possession=passed(session.possession, Method.PRESET),
                ),
                False,
            )

        session, revoked = self._steps.update(token.client_id, token.correlation_id, decide)
        logger.info(
            "device key proof",
            extra={"correlationId": session.correlation_id, "status": session.possession.status.value},
        )
        if revoked:
            raise DeviceRevoked()
        return self._possession.present(session, token.caller)

    def register(self, token: FlowToken, request: KeyRegistrationRequest) -> KeyRegistrationResponse:
        self._check_key_persistence(token, request.publicApiKey)
        jwk = canonical_jwk(request.publicKey)

        def decide(session: Session) -> tuple[Session, str]:
            unify = self._open(session)
            verify_proof(jwk, unify.nonce, request.signature)
            if unify.rebind_device_id is not None or unify.proven_device_id is not None:
                # The device's own key serves this flow (and moves to the new number on rebind).
                raise PossessionClosed("This flow already uses the device's key; no new key is needed")
            if unify.possession_type == "mobile" and session.possession.status != Possession.PASSED:
                raise PossessionClosed("A key is registered after possession has passed")
            device_id = unify.registered_device_id or uuid.uuid4().hex
            registered = replace(
                unify, registered_device_id=device_id, registered_jwk=tuple(sorted(jwk.items()))
            )
            return replace(session, unify=registered), device_id

        session, device_id = self._steps.update(token.client_id, token.correlation_id, decide)
        logger.info("device key registered", extra={"correlationId": session.correlation_id})
        return KeyRegistrationResponse(deviceId=device_id)
