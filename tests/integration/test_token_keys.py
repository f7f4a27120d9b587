"""Token signing keys on moto: random per window, sealed by KMS to their window, made ahead by the
rotation, opened once per instance and window by the signers; verifiers hold public halves only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import jwt as pyjwt
import pytest

from phoneid.adapters.dynamodb.batch_io import projection
from phoneid.adapters.dynamodb.own_writes import WRITE_TOKEN
from phoneid.adapters.dynamodb.token_keys import PUBLIC_ATTRIBUTES
from phoneid.domain import tokens
from phoneid.domain.errors import InternalError, Unauthorized
from phoneid.domain.token_keys import KeyWindow, PublicKey, SealedKey
from phoneid.ports import PrivateSigningKey, TokenKeyStore
from phoneid.services.token_keys import PublishedTokenKeys, TokenKeyRotation, WindowSigningKeys
from phoneid_dev.access.actions import Call, Request, requests_of
from phoneid_dev.access.policies import Resolved, Resolver, Roles, decide_request
from phoneid_dev.access.recording import facts_of
from tests.fakes import FakeClock
from tests.harness import Api, LogRecorder, kms_calls
from tests.sandbox_numbers import OTP_PASS

ISSUER, AUDIENCE = "urn:phoneid:sandbox:us", "urn:phoneid:sandbox:us:api"
MONDAY_NOON = datetime(2026, 11, 30, 12, tzinfo=UTC)
MONDAY, TUESDAY = KeyWindow(MONDAY_NOON.date()), KeyWindow(MONDAY_NOON.date() + timedelta(days=1))


@dataclass
class Keys:
    """The stack's key parts, for instances with clocks of their own."""

    api: Api

    @property
    def store(self) -> TokenKeyStore:
        return self.api.container.token_key_store

    def rotation(self, clock: FakeClock, store: TokenKeyStore | None = None) -> TokenKeyRotation:
        container = self.api.container
        return TokenKeyRotation(store or self.store, container.key_sealer, container.signing_key_maker, clock)

    def signer(self, clock: FakeClock) -> WindowSigningKeys:
        container = self.api.container
        return WindowSigningKeys(
            self.store, container.key_sealer, container.signing_key_maker, _Run(self.rotation(clock)), clock
        )

    def verifier(self, clock: FakeClock) -> PublishedTokenKeys:
        return PublishedTokenKeys(self.store, clock)

    def private_key_of(self, window: KeyWindow) -> PrivateSigningKey:
        """What only KMS and a signer can do: open a window's sealed key."""
        sealed = self.store.sealed(window)
        assert sealed is not None
        assert sealed.sealed_private is not None
        container = self.api.container
        return container.signing_key_maker.load(container.key_sealer.unseal(sealed.sealed_private, window))

    def item(self, window: KeyWindow) -> dict[str, Any]:
        table = self.api.container.settings.token_keys_table
        found: dict[str, Any] = boto3.client("dynamodb").get_item(
            TableName=table, Key={"window": {"S": window.name}}
        )["Item"]
        return found


class _Run:
    """The rotation run in-process, as the Lambda invoke would run it."""

    def __init__(self, rotation: TokenKeyRotation) -> None:
        self.rotation = rotation
        self.runs = 0

    def rotate_now(self) -> None:
        self.runs += 1
        self.rotation.run()


@pytest.fixture
def keys(api: Api) -> Keys:
    return Keys(api)


class _Signs:
    def __init__(self, key: PrivateSigningKey) -> None:
        self.key = key

    def signing_key(self) -> PrivateSigningKey:
        return self.key


def token(signer: Any, at: datetime, lifetime: timedelta = tokens.ACCESS_TOKEN_LIFETIME) -> str:
    claims = tokens.claims_for(
        audience=AUDIENCE,
        issuer=ISSUER,
        subject="client-a",
        token_use="access",
        now=at,
        lifetime=lifetime,
    )
    return tokens.encode(claims, signer)


def kid_of(jwt: str) -> str:
    return str(pyjwt.get_unverified_header(jwt)["kid"])


def verified(verifier: PublishedTokenKeys, jwt: str, now: datetime) -> dict[str, Any]:
    return tokens.verify(
        jwt, key_for=verifier.verification_key, issuer=ISSUER, audience=AUDIENCE, token_use="access", now=now
    )


def test_a_new_stacks_first_token_has_the_signer_run_the_rotation_and_the_jwks_publish_the_next_key(
    api: Api,
) -> None:
    # Given a stack whose rotation never ran
    table = api.container.settings.token_keys_table
    dynamodb = boto3.client("dynamodb")
    for item in dynamodb.scan(TableName=table)["Items"]:
        dynamodb.delete_item(TableName=table, Key={"window": item["window"]})
    assert api.request("GET", "/.well-known/jwks.json", None, {}).json() == {"keys": []}

    # When a client asks for a token
    access = api.token(api.create_client())

    # Then the signer had the rotation make today's and tomorrow's keys, and signed with today's; a
    # JWKS that found none reads again within a minute
    api.clock.advance(minutes=1)
    today = KeyWindow.at(api.clock.now())
    published = api.request("GET", "/.well-known/jwks.json", None, {}).json()["keys"]
    stored = [api.container.token_key_store.sealed(window) for window in (today, today.shifted(1))]
    assert [key["kid"] for key in published] == [key.jwk["kid"] for key in stored if key]
    assert kid_of(access) == published[0]["kid"]


def test_signers_open_the_windows_key_once_and_sign_without_kms_and_verifiers_never_call_kms(
    keys: Keys,
) -> None:
    keys.rotation(FakeClock(MONDAY_NOON)).run()
    signer, verifier = keys.signer(FakeClock(MONDAY_NOON)), keys.verifier(FakeClock(MONDAY_NOON))
    calls = kms_calls(keys.api.container.kms)

    issued = [token(signer, MONDAY_NOON) for _ in range(50)]
    subjects = {verified(verifier, jwt, MONDAY_NOON)["sub"] for jwt in issued}

    assert subjects == {"client-a"}
    assert calls == {"Decrypt": 1}


def test_a_windows_key_is_random_not_derived_from_anything(keys: Keys) -> None:
    # Given Monday's key
    rotation = keys.rotation(FakeClock(MONDAY_NOON))
    rotation.run()
    first = keys.private_key_of(MONDAY)

    # When it is replaced, its window and everything else the same
    rotation.replace()

    # Then the new key is another: nothing the old one was made from makes it again
    second = keys.private_key_of(MONDAY)
    assert second.jwk["kid"] != first.jwk["kid"]
    assert second.scalar != first.scalar
    # and the KMS key only seals: it cannot compute a MAC a key could be derived from
    key_id = keys.api.container.settings.token_signing_key_id
    spec = boto3.client("kms").describe_key(KeyId=key_id)["KeyMetadata"]
    assert (spec["KeySpec"], spec["KeyUsage"]) == ("SYMMETRIC_DEFAULT", "ENCRYPT_DECRYPT")


def test_the_key_changes_at_the_windows_edge_and_the_last_tokens_verify_until_they_expire(keys: Keys) -> None:
    clock = FakeClock(datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
    keys.rotation(clock).run()
    signer, verifier = keys.signer(clock), keys.verifier(clock)
    last_of_monday = token(signer, clock.current)

    # When the window closes
    clock.current = datetime(2026, 12, 1, 0, 0, 0, tzinfo=UTC)
    first_of_tuesday = token(signer, clock.current)

    # Then Tuesday's key (published on Monday) signs, and Monday's last token verifies for its hour
    assert kid_of(last_of_monday) == keys.private_key_of(MONDAY).jwk["kid"]
    assert kid_of(first_of_tuesday) == keys.private_key_of(TUESDAY).jwk["kid"]
    clock.current = datetime(2026, 12, 1, 0, 59, 58, tzinfo=UTC)
    assert verified(verifier, last_of_monday, clock.current)["sub"] == "client-a"
    assert verified(verifier, first_of_tuesday, clock.current)["sub"] == "client-a"
    clock.current = datetime(2026, 12, 1, 0, 59, 59, tzinfo=UTC)
    with pytest.raises(Unauthorized, match="expired"):
        verified(verifier, last_of_monday, clock.current)


def test_a_signer_whose_clock_is_ahead_signs_with_the_next_key_and_a_verifier_behind_accepts_it(
    keys: Keys,
) -> None:
    ahead = FakeClock(datetime(2026, 12, 1, 0, 0, 10, tzinfo=UTC))
    behind = FakeClock(datetime(2026, 11, 30, 23, 59, 50, tzinfo=UTC))
    keys.rotation(behind).run()

    assert verified(keys.verifier(behind), token(keys.signer(ahead), ahead.current), behind.current)


def test_a_token_of_the_next_key_before_its_window_or_of_the_last_key_after_it_is_refused(keys: Keys) -> None:
    # Given Monday noon: Tuesday's key exists (published), and so does Monday's
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    verifier = keys.verifier(clock)
    tuesday = _Signs(keys.private_key_of(TUESDAY))

    # When whoever holds Tuesday's private key signs a token issued now, on Monday
    early = token(tuesday, MONDAY_NOON)

    # Then no verifier accepts it, although the key is published
    assert verifier.verification_key(keys.private_key_of(TUESDAY).jwk["kid"]) is not None
    with pytest.raises(Unauthorized, match="outside its key's window"):
        verified(verifier, early, MONDAY_NOON)

    # And on Tuesday, a token Monday's key signs for Tuesday is refused too
    clock.current = datetime(2026, 12, 1, 0, 10, tzinfo=UTC)
    late = token(_Signs(keys.private_key_of(MONDAY)), clock.current)
    with pytest.raises(Unauthorized, match="outside its key's window"):
        verified(verifier, late, clock.current)


class _StaleReads:
    """A rotation that read the table just before another rotation wrote (it saw no key)."""

    def __init__(self, store: TokenKeyStore) -> None:
        self._store = store

    def public_keys(self, windows: Any) -> list[PublicKey]:
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_two_rotations_racing_for_a_window_store_one_key_and_every_signer_uses_it(keys: Keys) -> None:
    clock = FakeClock(MONDAY_NOON)
    first = keys.rotation(clock)
    second = keys.rotation(clock, store=_StaleReads(keys.store))  # type: ignore[arg-type]

    # When both find no key and both make one for Monday and Tuesday
    won = first.run()
    lost = second.run()

    # Then the first write stands for each window, the second is refused by its condition
    assert won.created == [MONDAY.name, TUESDAY.name]
    assert lost.created == []
    signed = token(keys.signer(clock), MONDAY_NOON)
    assert kid_of(signed) == keys.private_key_of(MONDAY).jwk["kid"]
    assert verified(keys.verifier(clock), signed, MONDAY_NOON)


def test_a_rotation_that_makes_or_forgets_a_key_says_so_in_the_log_and_one_that_changes_nothing_is_silent(
    keys: Keys, logged: LogRecorder
) -> None:
    # Given no keys yet: the first run makes this window's and the next one's, and forgets none
    clock = FakeClock(MONDAY_NOON)
    made = keys.rotation(clock).run()
    assert made.forgotten == []
    assert len(made.created) == 2
    rotated = [json.loads(line) for line in logged.lines if "token keys rotated" in line]
    assert [entry["windows_made"] for entry in rotated] == [made.created]

    # When it runs again in the same window, with nothing to make or forget
    again = keys.rotation(clock).run()

    # Then it logs nothing more
    assert (again.created, again.forgotten) == ([], [])
    assert len([line for line in logged.lines if "token keys rotated" in line]) == 1


def test_private_halves_are_forgotten_once_their_window_closes_and_public_halves_expire_with_their_tokens(
    keys: Keys,
) -> None:
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    clock.current = datetime(2026, 11, 30, 23, 50, tzinfo=UTC)
    monday_token = token(keys.signer(clock), clock.current)

    # Within the skew after Monday closes, a late signer may still open Monday's key
    clock.current = datetime(2026, 12, 1, 0, 0, 20, tzinfo=UTC)
    assert keys.rotation(clock).run().forgotten == []
    assert "sealedPrivateKey" in keys.item(MONDAY)

    # Then the next run forgets it: only public attributes are left
    clock.current = datetime(2026, 12, 1, 0, 1, tzinfo=UTC)
    assert keys.rotation(clock).run().forgotten == [MONDAY.name]
    assert set(keys.item(MONDAY)) == {*PUBLIC_ATTRIBUTES, "ttl", WRITE_TOKEN}

    # Its tokens still verify until they expire; then its key is neither accepted nor published
    verifier = keys.verifier(clock)
    assert verified(verifier, monday_token, clock.current)
    clock.current = datetime(2026, 12, 1, 1, 0, 31, tzinfo=UTC)
    kid = kid_of(monday_token)
    assert verifier.verification_key(kid) is None
    assert kid not in [key.kid for key in verifier.published()]


def test_the_next_windows_key_is_published_a_window_ahead_and_signs_nothing_before_it(keys: Keys) -> None:
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()

    published = [key.kid for key in keys.verifier(clock).published()]

    tuesday = keys.private_key_of(TUESDAY).jwk["kid"]
    assert published == [keys.private_key_of(MONDAY).jwk["kid"], tuesday]
    assert keys.signer(clock).signing_key().jwk["kid"] != tuesday


def test_a_verifier_reads_public_attributes_only_and_calls_no_kms(keys: Keys) -> None:
    keys.rotation(FakeClock(MONDAY_NOON)).run()
    signed = token(keys.signer(FakeClock(MONDAY_NOON)), MONDAY_NOON)
    reads: list[dict[str, Any]] = []
    dynamodb = keys.api.container.dynamodb
    dynamodb.meta.events.register(
        "provide-client-params.dynamodb.*", lambda params, model, **_: reads.append({model.name: params})
    )
    calls = kms_calls(keys.api.container.kms)

    verified(keys.verifier(FakeClock(MONDAY_NOON)), signed, MONDAY_NOON)

    assert calls == {}
    ((operation, params),) = (next(iter(read.items())) for read in reads)
    request = params["RequestItems"][keys.api.container.settings.token_keys_table]
    assert operation == "BatchGetItem"
    assert sorted(request["ExpressionAttributeNames"].values()) == sorted(PUBLIC_ATTRIBUTES)


def test_forged_kids_cost_a_verifier_one_read_a_minute_however_many_arrive(keys: Keys) -> None:
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    verifier = keys.verifier(clock)
    reads: list[str] = []
    keys.api.container.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.BatchGetItem", lambda **_: reads.append("read")
    )

    unknown = [verifier.verification_key(f"forged-{n}") for n in range(100)]
    clock.advance(seconds=61)
    unknown += [verifier.verification_key(f"forged-{n}") for n in range(100)]

    assert unknown == [None] * 200
    assert len(reads) == 2


def test_a_replaced_key_stops_signing_and_verifying_within_five_minutes(keys: Keys) -> None:
    clock = FakeClock(MONDAY_NOON)
    rotation = keys.rotation(clock)
    rotation.run()
    signer, verifier = keys.signer(clock), keys.verifier(clock)
    before = token(signer, clock.current)
    assert verified(verifier, before, clock.current)

    # When the operator replaces the keys (`phoneid token-keys replace`)
    replaced = rotation.replace()

    # Then, five minutes on, the signers sign with the new key and the old key's tokens are refused
    clock.advance(minutes=5)
    after = token(signer, clock.current)
    assert kid_of(after) == replaced[0].kid
    assert verified(verifier, after, clock.current)
    with pytest.raises(Unauthorized, match="unknown key"):
        verified(verifier, before, clock.current)


def test_a_sealed_key_moved_into_another_windows_item_does_not_open(keys: Keys) -> None:
    # Given Tuesday's sealed key copied into Monday's item (someone who can write the table)
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    tuesday = keys.store.sealed(TUESDAY)
    assert tuesday is not None
    keys.store.replace(SealedKey(MONDAY, tuesday.jwk, tuesday.sealed_private))

    # Then KMS refuses to open it for Monday: no signer signs Monday's tokens with it
    with pytest.raises(InternalError):
        keys.signer(clock).signing_key()


VERIFIERS = ("AuthorizerFunction", "ClientAuthorizerFunction", "WebSocketFunction", "JwksFunction")
SIGNERS = ("TokenFunction", "StartFunction", "UnifyFunction")


def test_no_verifier_role_can_obtain_a_private_key_and_no_signer_can_make_one(api: Api) -> None:
    # Given the roles as template.yaml grants them on this stack, and what each kind of call asks IAM
    facts = facts_of(api.stack)
    roles = Roles(api.stack.template)
    table = api.container.settings.token_keys_table
    key_id = api.container.settings.token_signing_key_id
    window = {"use": "token-signing-key", "window": MONDAY.name}

    def asks(operation: str, service: str = "dynamodb", **params: Any) -> Request:
        call = Call(service, operation, params, facts.region, facts.account)
        (request,) = requests_of(call)
        return request

    public_read = asks("BatchGetItem", RequestItems={table: {"Keys": [], **projection(PUBLIC_ATTRIBUTES)}})
    whole_reads = [
        asks("GetItem", TableName=table, Key={}),
        asks("BatchGetItem", RequestItems={table: {"Keys": []}}),
        asks(
            "BatchGetItem", RequestItems={table: {"Keys": [], **projection(("window", "sealedPrivateKey"))}}
        ),
        asks("Query", TableName=table, KeyConditionExpression="x"),
        asks("Scan", TableName=table),
    ]
    opening = asks("Decrypt", "kms", KeyId=key_id, CiphertextBlob=b"", EncryptionContext=window)
    sealing = asks("Encrypt", "kms", KeyId=key_id, Plaintext=b"", EncryptionContext=window)
    writes = [
        asks("PutItem", TableName=table, Item={"window": {}}),
        asks("UpdateItem", TableName=table, Key={}),
    ]

    def allowed(function: str, request: Request) -> bool:
        statements = [Resolved.of(s, Resolver(facts)) for s in roles.statements(function, facts.parameters)]
        return decide_request(statements, request).allowed

    # Then a verifier reads public halves and nothing else: no whole item, no KMS on the key
    for verifier in VERIFIERS:
        assert allowed(verifier, public_read), verifier
        assert not any(allowed(verifier, read) for read in whole_reads), verifier
        assert not allowed(verifier, opening), verifier
        assert not allowed(verifier, sealing), verifier
    # A signer opens a key, and can neither make one nor write the table
    for signer in SIGNERS:
        assert allowed(signer, opening), signer
        assert not allowed(signer, sealing), signer
        assert not any(allowed(signer, write) for write in writes), signer
    # The rotation makes and writes keys, and cannot open one
    assert allowed("TokenKeysFunction", sealing)
    assert all(allowed("TokenKeysFunction", write) for write in writes)
    assert not allowed("TokenKeysFunction", opening)
    # And no other function holds any permission on the key
    others = set(api.stack.template.functions) - {*VERIFIERS, *SIGNERS, "TokenKeysFunction"}
    assert not [f for f in sorted(others) if allowed(f, opening) or allowed(f, sealing)]


@pytest.mark.cold_instances
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v3/start", {"flowType": "mobile", "phoneNumber": OTP_PASS}),
        ("/v3/unify", {"possessionType": "mobile", "phoneNumber": OTP_PASS}),
    ],
)
def test_a_signer_whose_window_has_no_key_runs_the_rotation_and_signs_with_the_key_it_made(
    api: Api, path: str, body: dict[str, str]
) -> None:
    # Given an access token of the window's last minutes, and no key made for the next window (the
    # rotation did not run in time, or its item was lost)
    api.clock.current = KeyWindow.at(api.clock.now()).closes - timedelta(minutes=10)
    integrator = api.integrator()
    assert integrator.access_token
    next_window = KeyWindow.at(api.clock.now()).shifted(1)
    boto3.client("dynamodb").delete_item(
        TableName=api.container.settings.token_keys_table, Key={"window": {"S": next_window.name}}
    )

    # When a flow starts in the next window, on an instance that never opened a key
    api.clock.advance(minutes=15)
    answer = integrator.post(path, body)

    # Then the function ran the rotation, which made the window's key, and signed the authToken with it
    assert answer.status == 200, answer.body
    made = api.container.token_key_store.sealed(next_window)
    assert made is not None
    assert kid_of(answer.json()["authToken"]) == made.jwk["kid"]
