"""Connect onboarding: what is provisioned, what is refused, and the Enroll Key shown once."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import astuple, replace
from datetime import timedelta
from typing import Literal

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from phoneid.domain.clients import Client, Solution
from phoneid.domain.connect import ConnectProfile, ConnectTransport
from phoneid.domain.credentials import hash_secret, verify_secret
from phoneid.services.connect_onboarding import (
    ConnectOnboarding,
    InvalidConnectSpec,
    NotOnboarded,
    check_ssh_key,
    ssh_key_fingerprint,
)
from tests.fakes import START, FakeClock, InMemoryClientStore


class InMemoryConnectProfiles:
    """The DynamoDB adapter's semantics: a name belongs to one client; one name per client."""

    def __init__(self) -> None:
        self.by_name: dict[str, ConnectProfile] = {}
        self.names: dict[str, str] = {}
        self._lock = threading.Lock()

    def get_by_name(self, client_name: str) -> ConnectProfile | None:
        return self.by_name.get(client_name)

    def get_by_client(self, client_id: str) -> ConnectProfile | None:
        name = self.names.get(client_id)
        return self.by_name.get(name) if name else None

    def put(self, profile: ConnectProfile) -> None:
        with self._lock:
            holder = self.by_name.get(profile.client_name)
            if holder is not None and holder.client_id != profile.client_id:
                raise ValueError(f"the client name {profile.client_name!r} belongs to another client")
            previous = self.names.get(profile.client_id)
            if previous is not None and previous != profile.client_name:
                del self.by_name[previous]
            self.by_name[profile.client_name] = profile
            self.names[profile.client_id] = profile.client_name

    def delete(self, client_id: str) -> bool:
        with self._lock:
            name = self.names.pop(client_id, None)
            if name is None:
                return False
            del self.by_name[name]
            return True


class RecordingSftpUsers:
    def __init__(self, fail: bool = False) -> None:
        self.users: dict[str, tuple[str, ...]] = {}
        self.fail = fail

    def create(self, client_name: str, ssh_public_keys: Sequence[str]) -> None:
        if self.fail:
            raise RuntimeError("Transfer Family is down")
        self.users[client_name] = tuple(ssh_public_keys)

    def delete(self, client_name: str) -> bool:
        return self.users.pop(client_name, None) is not None


def ed25519_key(comment: str = "ops@acme") -> str:
    public = ed25519.Ed25519PrivateKey.generate().public_key()
    return f"{public.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()} {comment}"


def ecdsa_key() -> str:
    public = ec.generate_private_key(ec.SECP384R1()).public_key()
    return public.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()


def rsa_key(bits: int) -> str:
    public = rsa.generate_private_key(public_exponent=65537, key_size=bits).public_key()
    return public.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()


class SigningUrls:
    """Stands for S3's presigning: the URL names what was signed, so a test can read it back."""

    def __init__(self) -> None:
        self.signed: list[tuple[str, str, int]] = []

    def url(self, method: Literal["PUT", "GET"], key: str, expires_in: int) -> str:
        self.signed.append((method, key, expires_in))
        return f"https://bucket.example/{key}?method={method}&expires={expires_in}"


class World:
    def __init__(
        self,
        transfer: RecordingSftpUsers | None = None,
        transport: ConnectTransport = ConnectTransport.SFTP,
    ) -> None:
        self.clock = FakeClock()
        self.clients = InMemoryClientStore()
        self.profiles = InMemoryConnectProfiles()
        self.transfer = transfer
        self.urls = SigningUrls()
        self.onboarding = ConnectOnboarding(
            self.profiles, self.clients, self.clock, transfer=transfer, transport=transport, urls=self.urls
        )

    def client(self, client_id: str = "client-1", enabled: bool = True) -> Client:
        client = Client(
            client_id=client_id,
            tier="sandbox",
            region="US",
            solution=Solution.VERIFIED_USER,
            secret_hash=hash_secret("a-client-secret-long-enough"),
            created_at=START,
            enabled=enabled,
        )
        self.clients.put(client)
        return client


@pytest.fixture
def world() -> World:
    return World()


def test_onboarding_provisions_the_profile_and_shows_the_enroll_key_once(world: World) -> None:
    # Given an enabled client
    world.client()
    key = ed25519_key()

    # When the operator onboards it
    profile, enroll_key = world.onboarding.onboard(
        "client-1", "acme", ["verifiedUser", "humanAssurance"], [key], ["ops@acme.example"]
    )

    # Then the profile holds the name, types, key and address, and only a hash of the Enroll Key
    stored = world.profiles.get_by_client("client-1")
    assert stored == profile
    assert world.profiles.get_by_name("acme") == profile
    assert profile.types == {"verifiedUser", "humanAssurance"}
    assert profile.ssh_public_keys == (key,)
    assert profile.emails == ("ops@acme.example",)
    assert profile.created_at == world.clock.now()
    assert len(enroll_key) >= 43  # 256 bits, URL-safe base64
    assert enroll_key not in repr(astuple(profile))
    assert verify_secret(enroll_key, profile.enroll_key_hash)
    assert profile.upload_prefix == "clients/acme/upload/"
    assert profile.download_prefix == "clients/acme/download/"


def test_show_never_returns_the_key(world: World) -> None:
    # Given an onboarded client
    world.client()
    _, enroll_key = world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    # When the operator shows its profile
    shown = world.onboarding.show("client-1")

    # Then the Enroll Key is nowhere in it, only its salted hash
    assert enroll_key not in repr(astuple(shown))
    assert shown.enroll_key_hash.startswith("scrypt$")


def test_rotating_the_key_invalidates_the_old_one(world: World) -> None:
    # Given an onboarded client and its first Enroll Key
    world.client()
    _, first = world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    # When the key is rotated
    profile, second = world.onboarding.rotate_key("client-1")

    # Then only the new key verifies, and nothing else of the profile changed
    stored = world.profiles.get_by_client("client-1")
    assert stored is not None
    assert second != first
    assert verify_secret(second, stored.enroll_key_hash)
    assert not verify_secret(first, stored.enroll_key_hash)
    assert replace(stored, enroll_key_hash="") == replace(profile, enroll_key_hash="")
    assert stored.client_name == "acme"


def test_remove_deletes_the_profile_and_frees_the_name(world: World) -> None:
    # Given an onboarded client
    world.client()
    world.client("client-2")
    world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    # When it is removed
    removed = world.onboarding.remove("client-1")

    # Then it is gone (show and a second remove say so) and another client may take the name
    assert removed.client_name == "acme"
    assert world.profiles.get_by_name("acme") is None
    with pytest.raises(NotOnboarded):
        world.onboarding.show("client-1")
    with pytest.raises(NotOnboarded):
        world.onboarding.remove("client-1")
    profile, _ = world.onboarding.onboard("client-2", "acme", ["humanAssurance"], [ed25519_key()])
    assert profile.client_id == "client-2"


def test_a_name_held_by_another_client_is_refused(world: World) -> None:
    # Given a client onboarded as acme
    world.client()
    world.client("client-2")
    world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    # When another client asks for the same name
    with pytest.raises(InvalidConnectSpec, match="belongs to another client"):
        world.onboarding.onboard("client-2", "acme", ["verifiedUser"], [ed25519_key()])

    # Then the first keeps it and the second has no profile
    holder = world.profiles.get_by_name("acme")
    assert holder is not None
    assert holder.client_id == "client-1"
    assert world.profiles.get_by_client("client-2") is None


def test_onboarding_twice_is_refused(world: World) -> None:
    world.client()
    world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    with pytest.raises(InvalidConnectSpec, match="already onboarded as 'acme'"):
        world.onboarding.onboard("client-1", "acme-two", ["verifiedUser"], [ed25519_key()])


def test_the_client_must_exist_and_be_enabled(world: World) -> None:
    world.client("disabled", enabled=False)

    with pytest.raises(InvalidConnectSpec, match="no client nobody"):
        world.onboarding.onboard("nobody", "acme", ["verifiedUser"], [ed25519_key()])
    with pytest.raises(InvalidConnectSpec, match="disabled"):
        world.onboarding.onboard("disabled", "acme", ["verifiedUser"], [ed25519_key()])
    assert world.profiles.by_name == {}


@pytest.mark.parametrize(
    "name",
    ["a", "Acme", "acme_us", "-acme", "acme-", "1acme", "ac.me", "ac/me", "acme corp", "a" * 41, ""],
)
def test_names_outside_the_file_name_rule_are_refused(world: World, name: str) -> None:
    world.client()

    with pytest.raises(InvalidConnectSpec, match="client name"):
        world.onboarding.onboard("client-1", name, ["verifiedUser"], [ed25519_key()])


@pytest.mark.parametrize("name", ["ab", "acme", "acme-corp-2", "a" * 40])
def test_names_inside_the_rule_are_taken(world: World, name: str) -> None:
    world.client()

    profile, _ = world.onboarding.onboard("client-1", name, ["verifiedUser"], [ed25519_key()])

    assert profile.client_name == name


def test_transfer_family_needs_three_characters() -> None:
    # Given onboarding for AWS (a Transfer Family user per client)
    world = World(RecordingSftpUsers())
    world.client()

    # Then a two-character name is refused, as Transfer Family would refuse the user
    with pytest.raises(InvalidConnectSpec, match="3 characters"):
        world.onboarding.onboard("client-1", "ab", ["verifiedUser"], [ed25519_key()])


@pytest.mark.parametrize(
    "types", [[], [""], ["verifieduser"], ["verifiedUser", "staged"], ["possession"]], ids=repr
)
def test_types_must_be_connect_types(world: World, types: list[str]) -> None:
    world.client()

    with pytest.raises(InvalidConnectSpec, match="verification types"):
        world.onboarding.onboard("client-1", "acme", types, [ed25519_key()])


@pytest.mark.parametrize(
    "emails",
    [
        ["ops"],
        ["ops@"],
        ["@acme.example"],
        ["ops@acme"],
        ["ops@acme.example, cfo@acme.example"],
        ["a b@x.io"],
    ],
    ids=repr,
)
def test_emails_must_be_addresses(world: World, emails: list[str]) -> None:
    world.client()

    with pytest.raises(InvalidConnectSpec, match="not an email address"):
        world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()], emails)


def test_emails_are_optional_and_deduplicated(world: World) -> None:
    world.client()

    profile, _ = world.onboarding.onboard(
        "client-1", "acme", ["verifiedUser"], [ed25519_key()], ["ops@acme.example", " ops@acme.example "]
    )

    assert profile.emails == ("ops@acme.example",)


def test_each_openssh_key_type_is_taken_and_normalised() -> None:
    ed, ecdsa, strong_rsa = ed25519_key("laptop key"), ecdsa_key(), rsa_key(2048)

    assert check_ssh_key(f"  {ed}\n") == ed
    assert check_ssh_key(ecdsa) == ecdsa
    assert check_ssh_key(strong_rsa) == strong_rsa


def test_the_fingerprint_is_the_one_ssh_keygen_prints() -> None:
    # Given a key whose fingerprint `ssh-keygen -lf` printed
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host"

    # Then ours is the same
    assert ssh_key_fingerprint(key) == "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"


@pytest.mark.parametrize(
    "line",
    [
        "not a key",
        "ssh-dss AAAAB3NzaC1kc3MAAACBAP== old",
        "ssh-ed25519",
        "ssh-ed25519 !!!notbase64",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GK",  # truncated
        'from="10.0.0.1" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ],
)
def test_anything_but_a_public_key_line_is_refused(line: str) -> None:
    with pytest.raises(InvalidConnectSpec, match="SSH key"):
        check_ssh_key(line)


def test_a_key_whose_data_names_another_type_is_refused() -> None:
    # The type word says Ed25519, the blob is an ECDSA key
    blob = ecdsa_key().split()[1]
    with pytest.raises(InvalidConnectSpec, match="not 'ssh-ed25519'"):
        check_ssh_key(f"ssh-ed25519 {blob}")


def test_short_rsa_keys_are_refused() -> None:
    with pytest.raises(InvalidConnectSpec, match="2048 bits"):
        check_ssh_key(rsa_key(1024))


def test_a_key_is_needed(world: World) -> None:
    world.client()

    with pytest.raises(InvalidConnectSpec, match="at least one SSH public key"):
        world.onboarding.onboard("client-1", "acme", ["verifiedUser"], ["", "  "])


def test_with_transfer_family_the_sftp_user_is_created_and_removed() -> None:
    # Given onboarding for a deployed stack
    transfer = RecordingSftpUsers()
    world = World(transfer)
    world.client()
    keys = [ed25519_key("one"), ed25519_key("two")]

    # When a client is onboarded, then removed
    world.onboarding.onboard("client-1", "acme", ["verifiedUser"], keys)
    created = dict(transfer.users)
    world.onboarding.remove("client-1")

    # Then its SFTP user existed with every key, and is gone with the profile
    assert created == {"acme": tuple(keys)}
    assert transfer.users == {}
    assert world.profiles.get_by_client("client-1") is None


def test_a_failed_sftp_user_leaves_no_profile_behind() -> None:
    # Given Transfer Family failing
    world = World(RecordingSftpUsers(fail=True))
    world.client()

    # When a client is onboarded
    with pytest.raises(RuntimeError, match="Transfer Family is down"):
        world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    # Then no profile holds the name (the operator can simply try again)
    assert world.profiles.get_by_name("acme") is None
    assert world.profiles.get_by_client("client-1") is None


def test_submit_shows_verification_progress_as_a_bar() -> None:
    from phoneid_cli.batches import progress_bar

    assert progress_bar(0, 800) == "[..............................] 0/800 chunks"
    assert progress_bar(400, 800) == "[###############...............] 400/800 chunks"
    assert progress_bar(801, 800) == "[##############################] 801/800 chunks"


# --- the transport: what a client gets to send files with ------------------------------------------


@pytest.mark.parametrize("transport", [ConnectTransport.S3, ConnectTransport.NONE])
def test_without_sftp_onboarding_needs_no_key_and_creates_no_sftp_user(transport: ConnectTransport) -> None:
    # Given a stack whose transport is not SFTP (a Transfer Family client at hand all the same)
    transfer = RecordingSftpUsers()
    world = World(transfer, transport)
    world.client()

    # When a client is onboarded without SSH keys, with a two-character name, then removed
    profile, enroll_key = world.onboarding.onboard("client-1", "ab", ["verifiedUser"], emails=["ops@ab.io"])
    created = dict(transfer.users)
    world.onboarding.remove("client-1")

    # Then it had a profile and an Enroll Key but no login anywhere
    assert profile.ssh_public_keys == ()
    assert verify_secret(enroll_key, profile.enroll_key_hash)
    assert created == {}
    assert world.profiles.get_by_client("client-1") is None


@pytest.mark.parametrize("transport", [ConnectTransport.S3, ConnectTransport.NONE])
def test_without_sftp_ssh_keys_are_refused(transport: ConnectTransport) -> None:
    world = World(RecordingSftpUsers(), transport)
    world.client()

    with pytest.raises(InvalidConnectSpec, match=f"transport is {transport.value} .*without --ssh-key"):
        world.onboarding.onboard("client-1", "acme", ["verifiedUser"], [ed25519_key()])

    assert world.profiles.by_name == {}


def s3_world() -> World:
    world = World(transport=ConnectTransport.S3)
    world.client()
    world.onboarding.onboard("client-1", "acme", ["verifiedUser"])
    return world


def test_urls_put_the_file_under_the_clients_upload_prefix_and_get_its_results() -> None:
    # Given an S3 stack and an onboarded client
    world = s3_world()
    name = "acme_US_verifiedUser_20260101120000.csv"

    # When the operator asks for the URLs of one of its files, valid for 2 hours
    issued = world.onboarding.batch_urls("client-1", name, timedelta(hours=2))

    # Then one PUT of exactly the upload key, and a GET of each result file, all valid 2 hours
    assert issued.key == f"clients/acme/upload/{name}"
    assert issued.upload == f"https://bucket.example/clients/acme/upload/{name}?method=PUT&expires=7200"
    assert issued.expires_at == world.clock.now() + timedelta(hours=2)
    stem = name.removesuffix(".csv")
    assert {kind: file for kind, (file, _) in issued.results.items()} == {
        "output": f"{stem}_output.csv",
        "errors": f"{stem}_errors.csv",
        "rejected": f"{stem}_rejected.csv",
    }
    assert sorted(world.urls.signed) == sorted(
        [("PUT", f"clients/acme/upload/{name}", 7200)]
        + [
            ("GET", f"clients/acme/download/{stem}_{kind}.csv", 7200)
            for kind in ("output", "errors", "rejected")
        ]
    )


def test_download_urls_sign_no_upload() -> None:
    world = s3_world()

    issued = world.onboarding.batch_urls(
        "client-1", "acme_INTL_verifiedUser_20260101120000.csv", upload=False
    )

    assert issued.upload is None
    assert {method for method, _, _ in world.urls.signed} == {"GET"}
    assert {seconds for _, _, seconds in world.urls.signed} == {24 * 3600}  # the default lifetime


@pytest.mark.parametrize(
    ("file_name", "refusal"),
    [
        ("acme_US_verifiedUser_2026.csv", "expected acme_"),
        ("acme_US_verifiedUser_20260101120000.CSV", "expected acme_"),
        ("beta_US_verifiedUser_20260101120000.csv", "is for client 'beta'"),
        ("acme_US_humanAssurance_20260101120000.csv", "may send verifiedUser, not humanAssurance"),
    ],
)
def test_a_file_the_workflow_would_reject_gets_no_url(file_name: str, refusal: str) -> None:
    world = s3_world()

    with pytest.raises(InvalidConnectSpec, match=refusal):
        world.onboarding.batch_urls("client-1", file_name)

    assert world.urls.signed == []


@pytest.mark.parametrize("lifetime", [timedelta(seconds=59), timedelta(days=7, seconds=1)])
def test_a_url_lives_a_minute_to_seven_days(lifetime: timedelta) -> None:
    world = s3_world()

    with pytest.raises(InvalidConnectSpec, match="a minute to 7 days"):
        world.onboarding.batch_urls("client-1", "acme_US_verifiedUser_20260101120000.csv", lifetime)

    world.onboarding.batch_urls("client-1", "acme_US_verifiedUser_20260101120000.csv", timedelta(days=7))
    assert world.urls.signed[0][2] == 7 * 24 * 3600


def test_urls_need_an_onboarded_enabled_client() -> None:
    world = s3_world()
    name = "acme_US_verifiedUser_20260101120000.csv"

    with pytest.raises(NotOnboarded):
        world.onboarding.batch_urls("client-2", name)
    world.client(enabled=False)
    with pytest.raises(InvalidConnectSpec, match="disabled"):
        world.onboarding.batch_urls("client-1", name)
    assert world.urls.signed == []


@pytest.mark.parametrize(
    ("transport", "refusal"),
    [(ConnectTransport.SFTP, "put files over SFTP"), (ConnectTransport.NONE, "issues no upload URLs")],
)
def test_only_an_s3_stack_issues_urls(transport: ConnectTransport, refusal: str) -> None:
    world = World(transport=transport)
    world.client()
    world.onboarding.onboard(
        "client-1", "acme", ["verifiedUser"], [ed25519_key()] if transport is ConnectTransport.SFTP else []
    )

    with pytest.raises(InvalidConnectSpec, match=refusal):
        world.onboarding.batch_urls("client-1", "acme_US_verifiedUser_20260101120000.csv")

    assert world.urls.signed == []


@pytest.mark.parametrize(
    ("written", "seconds"), [("15m", 900), ("24h", 86400), ("7d", 604800), ("3600", 3600), ("2H", 7200)]
)
def test_a_urls_lifetime_is_a_number_and_a_unit(written: str, seconds: int) -> None:
    from phoneid_cli.commands.connect import url_lifetime

    assert url_lifetime(written) == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "written",
    # '²' is a digit to str.isdigit() that int() refuses; 5,000 digits are past int()'s limit; a
    # hundred billion days past timedelta's
    ["", "h", "1w", "-5m", "1.5h", "one day", "²h", "9" * 5000, "99999999999d"],
)
def test_anything_else_is_not_a_lifetime(written: str) -> None:
    from argparse import ArgumentTypeError

    from phoneid_cli.commands.connect import url_lifetime

    with pytest.raises(ArgumentTypeError, match="not a duration"):
        url_lifetime(written)
