"""The token signing keys of the day (moto's KMS): derived, not stored; one KMS call per instance
and day, whatever the number of tokens; yesterday's, today's and tomorrow's keys verify."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from phoneid.adapters.kms import DailyTokenKeys
from phoneid.domain import tokens
from phoneid.domain.errors import Unauthorized
from tests.fakes import FakeClock
from tests.harness import Api, kms_calls

ISSUER, AUDIENCE = "urn:phoneid:sandbox:us", "urn:phoneid:sandbox:us:api"


@pytest.fixture
def keys(api: Api) -> tuple[Any, str]:
    return api.container.kms, api.container.settings.token_signing_key_id


def token(signer: DailyTokenKeys, at: datetime) -> str:
    claims = tokens.claims_for(
        audience=AUDIENCE,
        issuer=ISSUER,
        subject="client-a",
        token_use="access",
        now=at,
        lifetime=tokens.ACCESS_TOKEN_LIFETIME,
    )
    return tokens.encode(claims, signer)


def verified(verifier: DailyTokenKeys, jwt: str, now: datetime) -> dict[str, Any]:
    return tokens.verify(
        jwt, key_for=verifier.verification_key, issuer=ISSUER, audience=AUDIENCE, token_use="access", now=now
    )


def test_instances_derive_the_same_key_once_a_day_and_sign_without_kms(keys: tuple[Any, str]) -> None:
    kms, key_id = keys
    noon = datetime(2026, 11, 23, 12, tzinfo=UTC)
    signer, verifier = (
        DailyTokenKeys(kms, key_id, FakeClock(noon).now),
        DailyTokenKeys(kms, key_id, FakeClock(noon).now),
    )
    calls = kms_calls(kms)

    # When one instance signs 50 tokens and another verifies them
    issued = [token(signer, noon) for _ in range(50)]
    subjects = {verified(verifier, jwt, noon)["sub"] for jwt in issued}

    # Then every token verifies, and each instance asked KMS once, for the day's key
    assert subjects == {"client-a"}
    assert calls == {"GenerateMac": 2}
    assert signer.signing_key().jwk == verifier.signing_key().jwk


def test_the_key_changes_at_midnight_and_yesterdays_tokens_verify_until_they_expire(
    keys: tuple[Any, str],
) -> None:
    kms, key_id = keys
    clock = FakeClock(datetime(2026, 11, 23, 23, 30, tzinfo=UTC))
    stack = DailyTokenKeys(kms, key_id, clock.now)
    late = token(stack, clock.current)
    monday = stack.signing_key().jwk["kid"]

    # When the day changes
    clock.current = datetime(2026, 11, 24, 0, 10, tzinfo=UTC)

    # Then a new key signs, and the token of 23:30 still verifies until its 60 minutes are up
    assert stack.signing_key().jwk["kid"] != monday
    assert verified(stack, late, clock.current)["sub"] == "client-a"
    clock.current = datetime(2026, 11, 24, 0, 31, tzinfo=UTC)
    with pytest.raises(Unauthorized, match="expired"):
        verified(stack, late, clock.current)


def test_a_key_two_days_old_or_a_foreign_key_verifies_nothing(keys: tuple[Any, str]) -> None:
    kms, key_id = keys
    clock = FakeClock(datetime(2026, 11, 23, 12, tzinfo=UTC))
    stack = DailyTokenKeys(kms, key_id, clock.now)
    monday = stack.signing_key().jwk["kid"]
    calls = kms_calls(kms)

    clock.advance(days=2)
    unknown = [stack.verification_key(kid) for kid in (monday, "forged-1", "forged-2", "forged-3")]

    # Then none is known, and however many unknown kids arrive, an instance derives at most three keys
    assert unknown == [None, None, None, None]
    assert calls == {"GenerateMac": 3}


def test_a_signer_whose_clock_is_in_tomorrow_signs_tokens_verifiers_accept(keys: tuple[Any, str]) -> None:
    kms, key_id = keys
    ahead = datetime(2026, 11, 24, 0, 0, 10, tzinfo=UTC)
    behind = datetime(2026, 11, 23, 23, 59, 50, tzinfo=UTC)
    signer, verifier = (
        DailyTokenKeys(kms, key_id, FakeClock(ahead).now),
        DailyTokenKeys(kms, key_id, FakeClock(behind).now),
    )

    assert verified(verifier, token(signer, ahead), behind)["sub"] == "client-a"


def test_the_published_keys_are_yesterdays_todays_and_tomorrows(keys: tuple[Any, str]) -> None:
    kms, key_id = keys
    clock = FakeClock(datetime(2026, 11, 23, 12, tzinfo=UTC))
    stack = DailyTokenKeys(kms, key_id, clock.now)
    published_monday = [key["kid"] for key in stack.published()]

    clock.advance(days=1)
    published_tuesday = [key["kid"] for key in stack.published()]

    # Tomorrow's key is published a day before it signs; yesterday's stays for its tokens
    assert len(set(published_monday)) == 3
    assert published_tuesday[:2] == published_monday[1:]
    assert stack.signing_key().jwk["kid"] == published_monday[2]
