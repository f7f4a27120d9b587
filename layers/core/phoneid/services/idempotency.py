"""Requests under an Idempotency-Key: the first runs, a retry of it gets its answer again
(docs/adr/0100-idempotency-keys.md).

The answer is kept sealed under the PII key (``use: idempotency``): a verification's answer holds
names, addresses and dates of birth, a start's the flow's authToken; the table holds nothing in clear
but the client id, a digest of the key and one of the request (docs/adr/0101-idempotent-answers-sealed.md).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from aws_lambda_powertools import Logger

from phoneid.domain.errors import IdempotencyKeyInUse, IdempotencyKeyReused, PhoneIdError
from phoneid.domain.idempotency import Claimed, IdempotentRequest, KeyRecord, RecordStatus, Replay, stored
from phoneid.ports import Clock, IdempotencyStore, PiiCipher

logger = Logger(child=True)

USE = "idempotency"


class IdempotentRequests:
    def __init__(
        self,
        store: IdempotencyStore,
        cipher: PiiCipher,
        clock: Clock,
        new_owner: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self._store = store
        self._cipher = cipher
        self._clock = clock
        self._new_owner = new_owner

    def begin(self, request: IdempotentRequest, lease: timedelta) -> Claimed | Replay:
        """Claim the key for ``lease`` (the function's remaining time: past it the attempt is over
        and a retry may run), or answer as the key's record says: the first answer again, 409 while
        it runs, 422 when the key was used for another request."""
        now = self._clock.now()
        record = request.claim(self._new_owner(), now, lease)
        holder = self._store.claim(record, now)
        if holder is None:
            return Claimed(record)
        if holder.fingerprint != request.fingerprint:
            raise IdempotencyKeyReused()
        if holder.status is RecordStatus.IN_PROGRESS or holder.response is None:
            raise IdempotencyKeyInUse()
        return Replay(json.loads(self._cipher.decrypt(holder.response, _context(holder))))

    def finish(self, claimed: Claimed, response: dict[str, Any]) -> None:
        """Keep a success to answer again; free the key after anything else. A failure here leaves
        the answer as it is: the request was done, and its lease ends the record's hold by itself."""
        record = claimed.record
        try:
            if stored(int(response.get("statusCode", 500))):
                sealed = self._cipher.encrypt(json.dumps(response).encode(), _context(record))
                if not self._store.complete(record, sealed):
                    logger.warning("idempotency key taken over before the answer was kept")
            else:
                self._store.release(record)
        except PhoneIdError as error:
            logger.warning("idempotency record not settled", extra={"code": error.code})

    def abandon(self, claimed: Claimed) -> None:
        """The request raised: free the key so that a retry runs it."""
        try:
            self._store.release(claimed.record)
        except PhoneIdError as error:
            logger.warning("idempotency key not released", extra={"code": error.code})


def _context(record: KeyRecord) -> dict[str, str]:
    """Bound to the client and the key: a sealed answer moved to another key or client does not open."""
    return {"use": USE, "clientId": record.client_id, "idempotencyKey": record.record_id}
