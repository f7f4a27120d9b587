"""PII sealed with cached KMS data keys (moto): one KMS call serves many records of one client and
use, and every record stays bound to its own context, as KMS Encrypt would bind it."""

from __future__ import annotations

from typing import Any

import pytest

from phoneid.adapters.kms import KmsPiiCipher
from phoneid.domain.errors import InternalError
from tests.harness import Api, kms_calls


class Clock:
    def __init__(self) -> None:
        self.seconds = 1000.0

    def __call__(self) -> float:
        return self.seconds


def session(client: str, correlation_id: str) -> dict[str, str]:
    return {"clientId": client, "correlationId": correlation_id, "use": "challenge"}


@pytest.fixture
def setup(api: Api) -> tuple[Any, str, Clock]:
    return api.container.kms, api.container.settings.pii_key_id, Clock()


def test_one_data_key_seals_a_clients_records_for_five_minutes(setup: tuple[Any, str, Clock]) -> None:
    kms, key_id, clock = setup
    cipher = KmsPiiCipher(kms, key_id, clock)
    calls = kms_calls(kms)

    # When three sessions of one client and one of another are sealed, then one more after 5 minutes
    for n in range(3):
        cipher.encrypt(b"pii", session("client-a", f"flow-{n}"))
    cipher.encrypt(b"pii", session("client-b", "flow-9"))
    clock.seconds += 301
    cipher.encrypt(b"pii", session("client-a", "flow-4"))

    # Then KMS made a data key per client, and a new one once the first was five minutes old
    assert calls == {"GenerateDataKey": 3}


def test_one_unwrapped_key_opens_all_the_records_it_sealed(setup: tuple[Any, str, Clock]) -> None:
    kms, key_id, clock = setup
    sealer = KmsPiiCipher(kms, key_id, clock)
    sealed = [(sealer.encrypt(f"pii {n}".encode(), session("client-a", f"flow-{n}")), n) for n in range(5)]
    opener = KmsPiiCipher(kms, key_id, clock)  # another instance: it has to unwrap the key
    calls = kms_calls(kms)

    # When another instance opens the five records
    opened = [opener.decrypt(blob, session("client-a", f"flow-{n}")) for blob, n in sealed]

    # Then each opens to its own data, for one KMS Decrypt
    assert opened == [f"pii {n}".encode() for n in range(5)]
    assert calls == {"Decrypt": 1}


def test_a_record_opens_only_with_its_own_context_cached_key_or_not(setup: tuple[Any, str, Clock]) -> None:
    kms, key_id, clock = setup
    cipher = KmsPiiCipher(kms, key_id, clock)
    mine = cipher.encrypt(b"ssn and dob", session("client-a", "flow-1"))
    cipher.encrypt(b"other", session("client-a", "flow-2"))
    assert cipher.decrypt(mine, session("client-a", "flow-1")) == b"ssn and dob"  # the key is cached now

    # When the record is presented as another session of the client, or as another client's session
    # Then it does not open (8000), though the data key is in the cache
    with pytest.raises(InternalError):
        cipher.decrypt(mine, session("client-a", "flow-2"))
    with pytest.raises(InternalError):
        cipher.decrypt(mine, session("client-b", "flow-1"))
    with pytest.raises(InternalError):
        KmsPiiCipher(kms, key_id, clock).decrypt(mine, session("client-b", "flow-1"))


def test_a_data_key_seals_at_most_ten_thousand_records(setup: tuple[Any, str, Clock]) -> None:
    kms, key_id, clock = setup
    cipher = KmsPiiCipher(kms, key_id, clock)
    calls = kms_calls(kms)
    records = [(b"pii", {"phoneNumber": f"+1202555{n:04d}", "use": "identity"}) for n in range(9_999)]

    # When 9,999 identities are sealed at once, then two more
    cipher.encrypt_many(records)
    cipher.encrypt(b"pii", {"phoneNumber": "+12025559998", "use": "identity"})
    cipher.encrypt(b"pii", {"phoneNumber": "+12025559999", "use": "identity"})

    # Then the first key sealed 10,000 and the 10,001st asked for a new one
    assert calls == {"GenerateDataKey": 2}
