"""A token key's window and a token's lifetime at their limits, both sides of each (docs/mutation.md).

A key of the UTC day D verifies tokens issued from D 00:00 - 30 s (the clock skew) up to, not
including, D+1 00:00 + 30 s; a token lives at most its kind's lifetime (``exp - iat``); the key's
private half is forgotten 30 s after its day, its public half kept until the last token it signed
has expired. Time is injected: every instant here is written out.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import jwt
import pytest

from phoneid.domain import tokens
from phoneid.domain.errors import Unauthorized
from phoneid.domain.token_keys import KeyWindow, PublicKey, SealedKey
from phoneid.domain.tokens import ACCESS_TOKEN_LIFETIME, CLOCK_SKEW, Audience
from tests.fakes import LocalSigner
from tests.unit.helpers import claims

SANDBOX_US = Audience("sandbox", "US")
DAY = KeyWindow(date(2026, 11, 22))
OPENS = datetime(2026, 11, 22, tzinfo=UTC)
CLOSES = datetime(2026, 11, 23, tzinfo=UTC)


class WindowSigner(LocalSigner):
    """A LocalSigner whose key is a window's key, as the stack's are: it admits its day ± the skew."""

    def __init__(self, window: KeyWindow) -> None:
        super().__init__()
        self._public = PublicKey.of(self.jwk, window)


def issued_at(signer: LocalSigner, moment: datetime, **overrides: Any) -> str:
    """An access token signed by ``signer``, issued at ``moment``."""
    return tokens.encode(claims(SANDBOX_US, moment, **overrides), signer)


def verify_at(token: str, signer: LocalSigner, now: datetime, **options: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "key_for": signer.verification_key,
        "issuer": SANDBOX_US.issuer,
        "audience": SANDBOX_US.api,
        "token_use": "access",
        "now": now,
        **options,
    }
    return tokens.verify(token, **arguments)


# --- the window's own arithmetic ---------------------------------------------------------------------


def test_a_window_is_the_utc_day_of_a_moment_in_any_zone() -> None:
    # Given 23:30 on the 22nd at UTC-5, which is 04:30 on the 23rd in UTC
    moment = datetime(2026, 11, 22, 23, 30, tzinfo=timezone(timedelta(hours=-5)))

    # When its window is asked for
    # Then it is the UTC day, named by its ISO date, and named back
    assert KeyWindow.at(moment) == KeyWindow(date(2026, 11, 23))
    assert KeyWindow.at(moment).name == "2026-11-23"
    assert KeyWindow.named("2026-11-23") == KeyWindow.at(moment)


def test_a_window_opens_at_midnight_utc_and_closes_a_day_later() -> None:
    assert (DAY.opens, DAY.closes) == (OPENS, CLOSES)
    assert DAY.opens.tzinfo == UTC


def test_a_windows_private_half_is_needed_until_30_s_after_its_day() -> None:
    assert DAY.sealing_ends == CLOSES + timedelta(seconds=30)


def test_no_token_of_a_window_is_valid_after_its_day_plus_the_skew_plus_an_hour() -> None:
    expected = CLOSES + timedelta(seconds=30) + timedelta(hours=1)
    assert DAY.last_token_expires == expected
    assert PublicKey.of({"kid": "k"}, DAY).useful_until == expected


def test_windows_shift_by_whole_days_both_ways() -> None:
    assert DAY.shifted(1) == KeyWindow(date(2026, 11, 23))
    assert DAY.shifted(-3) == KeyWindow(date(2026, 11, 19))
    assert DAY.shifted(0) == DAY


def test_a_public_key_spans_its_window_and_is_named_by_its_kid() -> None:
    key = PublicKey.of({"kid": "the-kid", "alg": "ES256"}, DAY)
    assert (key.not_before, key.not_after, key.kid) == (OPENS, CLOSES, "the-kid")
    sealed = SealedKey(DAY, {"kid": "the-kid", "alg": "ES256"}, None)
    assert sealed.public == key


def test_the_clock_skew_is_30_seconds_and_an_access_token_lives_an_hour() -> None:
    # The limits below are written out in seconds; these are the constants they stand for.
    assert timedelta(seconds=30) == CLOCK_SKEW
    assert timedelta(hours=1) == ACCESS_TOKEN_LIFETIME


# --- the window's edges ± the skew -------------------------------------------------------------------

ADMITTED = [
    ("30 s before the day opens (the skew)", OPENS - timedelta(seconds=30)),
    ("as the day opens", OPENS),
    ("the day's last second", CLOSES - timedelta(seconds=1)),
    ("29 s after the day closes", CLOSES + timedelta(seconds=29)),
]
REFUSED = [
    ("31 s before the day opens", OPENS - timedelta(seconds=31)),
    ("30 s after the day closes (the skew's end)", CLOSES + timedelta(seconds=30)),
    ("an hour after the day closes", CLOSES + timedelta(hours=1)),
    ("a day before", OPENS - timedelta(days=1)),
]


@pytest.mark.parametrize(("when", "moment"), ADMITTED, ids=[when for when, _ in ADMITTED])
def test_a_key_admits_a_token_issued_in_its_day_give_or_take_the_skew(when: str, moment: datetime) -> None:
    assert PublicKey.of({"kid": "k"}, DAY).admits(int(moment.timestamp()))


@pytest.mark.parametrize(("when", "moment"), REFUSED, ids=[when for when, _ in REFUSED])
def test_a_key_refuses_a_token_issued_outside_its_day_and_the_skew(when: str, moment: datetime) -> None:
    assert not PublicKey.of({"kid": "k"}, DAY).admits(int(moment.timestamp()))


@pytest.mark.parametrize(("when", "moment"), ADMITTED, ids=[when for when, _ in ADMITTED])
def test_a_token_issued_at_a_windows_edge_within_the_skew_verifies(when: str, moment: datetime) -> None:
    # Given a token signed by the day's key, issued at the edge
    signer = WindowSigner(DAY)
    token = issued_at(signer, moment)

    # When verified at the moment it was issued
    # Then it is accepted
    assert verify_at(token, signer, moment)["iat"] == int(moment.timestamp())


@pytest.mark.parametrize(("when", "moment"), REFUSED, ids=[when for when, _ in REFUSED])
def test_a_token_issued_past_a_windows_edge_and_the_skew_is_refused(when: str, moment: datetime) -> None:
    # Given a token signed by the day's key, issued outside the day and its skew
    signer = WindowSigner(DAY)
    token = issued_at(signer, moment)

    # When verified at the moment it was issued
    # Then it is Unauthorized, for the window
    with pytest.raises(Unauthorized, match="outside its key's window"):
        verify_at(token, signer, moment)


# --- exp - iat: the lifetime and one second over -----------------------------------------------------


def test_a_token_living_exactly_its_lifetime_verifies() -> None:
    signer = LocalSigner()
    iat = int(OPENS.timestamp())
    token = issued_at(signer, OPENS, exp=iat + 3600)
    assert verify_at(token, signer, OPENS)["exp"] == iat + 3600


def test_a_token_living_one_second_over_its_lifetime_is_refused() -> None:
    signer = LocalSigner()
    iat = int(OPENS.timestamp())
    token = issued_at(signer, OPENS, exp=iat + 3601)
    with pytest.raises(Unauthorized, match="lifetime too long"):
        verify_at(token, signer, OPENS)


def test_a_token_living_less_than_its_lifetime_verifies() -> None:
    signer = LocalSigner()
    iat = int(OPENS.timestamp())
    token = issued_at(signer, OPENS, exp=iat + 60)
    assert verify_at(token, signer, OPENS)["exp"] == iat + 60


def test_the_lifetime_cap_is_the_one_the_caller_names() -> None:
    # Given a token of 15 minutes and 1 second, under a cap of 15 minutes, then of 16
    signer = LocalSigner()
    iat = int(OPENS.timestamp())
    token = issued_at(signer, OPENS, exp=iat + 901)

    # Then the first refuses it, the second accepts it
    with pytest.raises(Unauthorized, match="lifetime too long"):
        verify_at(token, signer, OPENS, max_lifetime=timedelta(minutes=15))
    assert verify_at(token, signer, OPENS, max_lifetime=timedelta(minutes=16))["exp"] == iat + 901


def test_a_token_at_its_last_second_verifies_and_at_its_exp_does_not() -> None:
    signer = LocalSigner()
    token = issued_at(signer, OPENS)
    assert verify_at(token, signer, OPENS + timedelta(seconds=3599))
    with pytest.raises(Unauthorized, match="expired"):
        verify_at(token, signer, OPENS + timedelta(seconds=3600))


def test_a_token_issued_30_s_ahead_verifies_and_31_s_ahead_does_not() -> None:
    signer = LocalSigner()
    assert verify_at(issued_at(signer, OPENS + timedelta(seconds=30)), signer, OPENS)
    with pytest.raises(Unauthorized, match="future"):
        verify_at(issued_at(signer, OPENS + timedelta(seconds=31)), signer, OPENS)


# --- what else a key and a token must agree on -------------------------------------------------------


def test_a_token_is_judged_by_the_injected_clock_not_the_machines() -> None:
    # Given a token issued in 2099 by a key whose span covers it, verified in 2099 (the machine's
    # clock is decades behind: the token is "issued in the future" only to it)
    signer = LocalSigner()
    moment = datetime(2099, 6, 1, tzinfo=UTC)
    token = issued_at(signer, moment)

    # Then it verifies
    assert verify_at(token, signer, moment)["iat"] == int(moment.timestamp())


class KeyNamingNoAlgorithm(LocalSigner):
    """Publishes its key without ``alg``: PyJWT would infer ES256 from the curve if asked."""

    def __init__(self) -> None:
        super().__init__()
        self._public = PublicKey(
            {name: value for name, value in self.jwk.items() if name != "alg"},
            self._public.not_before,
            self._public.not_after,
        )


def test_a_key_published_without_an_algorithm_verifies_nothing() -> None:
    signer = KeyNamingNoAlgorithm()
    token = issued_at(signer, OPENS)
    with pytest.raises(Unauthorized, match="unknown key"):
        verify_at(token, signer, OPENS)


def test_an_access_token_is_refused_where_an_auth_token_is_required() -> None:
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, OPENS, aud=SANDBOX_US.client_sdk), signer)
    with pytest.raises(Unauthorized, match="wrong kind"):
        verify_at(token, signer, OPENS, audience=SANDBOX_US.client_sdk, token_use="client")


def test_an_auth_token_verifies_where_one_is_required() -> None:
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, OPENS, aud=SANDBOX_US.client_sdk, token_use="client"), signer)
    assert verify_at(token, signer, OPENS, audience=SANDBOX_US.client_sdk, token_use="client")["sub"]


def test_claims_carry_iat_now_and_exp_a_lifetime_later() -> None:
    made = tokens.claims_for(
        audience="aud",
        issuer="iss",
        subject="sub",
        token_use="access",
        now=OPENS + timedelta(seconds=0.9),
        lifetime=timedelta(minutes=15),
        extra={"cid": "client"},
    )
    iat = int(OPENS.timestamp())
    assert {name: made[name] for name in ("iss", "aud", "sub", "iat", "exp", "token_use", "cid")} == {
        "iss": "iss",
        "aud": "aud",
        "sub": "sub",
        "iat": iat,
        "exp": iat + 900,
        "token_use": "access",
        "cid": "client",
    }
    assert jwt.get_unverified_header(tokens.encode(made, LocalSigner()))["alg"] == "ES256"


def test_windows_order_by_day_and_keys_cannot_be_changed_once_made() -> None:
    assert sorted([DAY.shifted(1), DAY, DAY.shifted(-1)]) == [DAY.shifted(-1), DAY, DAY.shifted(1)]
    key = PublicKey.of({"kid": "k"}, DAY)
    sealed = SealedKey(DAY, {"kid": "k"}, b"sealed")
    for made, name in ((DAY, "day"), (key, "not_after"), (sealed, "sealed_private")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, name, None)
