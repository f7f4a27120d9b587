"""Connect onboarding (what is provisioned for a batch client, docs/connect.md): the client name its
files and SFTP user carry, the verification types it may send, its SSH keys, its notification
addresses and the Enroll Key its files' header must carry — shown once, stored only as a salted hash.

In AWS the SFTP user is a Transfer Family user (``SftpUsers``); locally the SFTP server reads the
profiles themselves at login, so nothing else is provisioned there.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import NamedTuple, Protocol

from phoneid.domain.connect import VERIFICATION_TYPES, ConnectProfile, valid_client_name
from phoneid.domain.credentials import hash_secret
from phoneid.ports import ClientStore, Clock, ConnectProfiles

# The OpenSSH public key line: `type base64 [comment]`. No options, no certificates, no DSA.
_KEY_LINE = re.compile(
    r"(ssh-ed25519|ecdsa-sha2-nistp(?:256|384|521)|ssh-rsa) ([A-Za-z0-9+/]+={0,2})(?: (.*))?"
)
_MIN_RSA_BITS = 2048
_MAX_KEYS = 10  # per client: a login list, not a key store
_MAX_EMAILS = 10
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"[^@\s,;<>\"]+@{_LABEL}(?:\.{_LABEL})+")


class InvalidConnectSpec(ValueError):
    """The operator asked for something onboarding refuses; the message says what and why."""


class NotOnboarded(InvalidConnectSpec):
    pass


class SftpUsers(Protocol):
    """The SFTP users of a deployed stack (Transfer Family); the local stack needs none."""

    def create(self, client_name: str, ssh_public_keys: Sequence[str]) -> None: ...

    def delete(self, client_name: str) -> bool: ...


class Onboarded(NamedTuple):
    profile: ConnectProfile
    enroll_key: str  # shown once; only its hash is stored


def new_enroll_key() -> str:
    """256 random bits, URL-safe base64: no comma or quote, so it sits in a CSV header as is."""
    return secrets.token_urlsafe(32)


# --- validation (pure) --------------------------------------------------------------------------


def check_client_name(name: str, *, transfer_user: bool = False) -> str:
    """The file names' rule (``phoneid.domain.connect``); AWS Transfer Family user names need 3 or more."""
    if not valid_client_name(name):
        raise InvalidConnectSpec(
            f"client name {name!r}: use 2 to 40 lowercase letters, digits and hyphens, starting with a "
            "letter and ending with a letter or digit (no '_': it separates the fields of a file name)"
        )
    if not valid_client_name(name, transfer_user=transfer_user):
        raise InvalidConnectSpec(
            f"client name {name!r}: AWS Transfer Family user names need 3 characters or more"
        )
    return name


def check_types(types: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(t.strip() for t in types if t.strip())
    unknown = chosen - VERIFICATION_TYPES
    if not chosen or unknown:
        raise InvalidConnectSpec(
            f"verification types must be one or more of {', '.join(sorted(VERIFICATION_TYPES))}"
            + (f"; not {', '.join(sorted(unknown))}" if unknown else "")
        )
    return chosen


def _ssh_string(blob: bytes, offset: int) -> tuple[bytes, int]:
    if offset + 4 > len(blob):
        raise ValueError("truncated")
    length = int.from_bytes(blob[offset : offset + 4], "big")
    end = offset + 4 + length
    if end > len(blob):
        raise ValueError("truncated")
    return blob[offset + 4 : end], end


def _check_blob(kind: str, blob: bytes) -> None:
    """The key blob (RFC 4253 §6.6, RFC 5656, RFC 8709): its own type name, then the key's fields."""
    name, offset = _ssh_string(blob, 0)
    if name.decode("ascii", "replace") != kind:
        raise ValueError(f"the key data is a {name.decode('ascii', 'replace')!r} key, not {kind!r}")
    if kind == "ssh-ed25519":
        point, offset = _ssh_string(blob, offset)
        if len(point) != 32:
            raise ValueError("an Ed25519 key has 32 bytes")
    elif kind.startswith("ecdsa-sha2-"):
        curve, offset = _ssh_string(blob, offset)
        if curve.decode("ascii", "replace") != kind.removeprefix("ecdsa-sha2-"):
            raise ValueError("the curve does not match the key type")
        _, offset = _ssh_string(blob, offset)
    else:
        _, offset = _ssh_string(blob, offset)  # e
        modulus, offset = _ssh_string(blob, offset)
        if int.from_bytes(modulus, "big").bit_length() < _MIN_RSA_BITS:
            raise ValueError(f"RSA keys need at least {_MIN_RSA_BITS} bits")
    if offset != len(blob):
        raise ValueError("trailing data")


def check_ssh_key(line: str) -> str:
    """One OpenSSH public key line (`ssh-ed25519 AAAA... comment`), normalised; InvalidConnectSpec else."""
    text = " ".join(line.split())
    found = _KEY_LINE.fullmatch(text)
    # Only the first word is echoed: a line that is not a public key may be something secret.
    shown = (text.split(" ", 1)[0][:24] or "(empty)") + (" ..." if " " in text else "")
    if not found:
        raise InvalidConnectSpec(
            f"SSH key {shown!r}: expected an OpenSSH public key line "
            "(ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa, then base64, then an optional comment)"
        )
    kind, data, _ = found.groups()
    try:
        _check_blob(kind, base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError) as error:
        raise InvalidConnectSpec(f"SSH key {shown!r}: not a valid {kind} public key ({error})") from None
    return text


def ssh_key_fingerprint(line: str) -> str:
    """As `ssh-keygen -l` prints it: SHA256 of the key blob, base64 without padding."""
    blob = base64.b64decode(line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def check_ssh_keys(lines: Iterable[str]) -> tuple[str, ...]:
    keys = tuple(dict.fromkeys(check_ssh_key(line) for line in lines if line.strip()))
    if not keys:
        raise InvalidConnectSpec("at least one SSH public key is needed: it is the client's SFTP login")
    if len(keys) > _MAX_KEYS:
        raise InvalidConnectSpec(f"at most {_MAX_KEYS} SSH public keys per client")
    return keys


def check_emails(emails: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(e.strip() for e in emails if e.strip()))
    bad = [e for e in chosen if len(e) > 254 or not _EMAIL.fullmatch(e)]
    if bad:
        raise InvalidConnectSpec(f"not an email address: {', '.join(bad)}")
    if len(chosen) > _MAX_EMAILS:
        raise InvalidConnectSpec(f"at most {_MAX_EMAILS} notification addresses per client")
    return chosen


# --- the service --------------------------------------------------------------------------------


class ConnectOnboarding:
    def __init__(
        self,
        profiles: ConnectProfiles,
        clients: ClientStore,
        clock: Clock,
        transfer: SftpUsers | None = None,
    ) -> None:
        self._profiles = profiles
        self._clients = clients
        self._clock = clock
        self._transfer = transfer

    def onboard(
        self,
        client_id: str,
        name: str,
        types: Iterable[str],
        ssh_keys: Iterable[str],
        emails: Iterable[str] = (),
    ) -> Onboarded:
        """Provision Connect for an existing, enabled client; the Enroll Key is in the answer only."""
        profile = ConnectProfile(
            client_id=client_id,
            client_name=check_client_name(name, transfer_user=self._transfer is not None),
            types=check_types(types),
            enroll_key_hash="",
            emails=check_emails(emails),
            ssh_public_keys=check_ssh_keys(ssh_keys),
            created_at=self._clock.now(),
        )
        client = self._clients.get(client_id)
        if client is None:
            raise InvalidConnectSpec(f"no client {client_id}: create it first (phoneid clients create)")
        if not client.enabled:
            raise InvalidConnectSpec(f"client {client_id} is disabled")
        existing = self._profiles.get_by_client(client_id)
        if existing is not None:
            raise InvalidConnectSpec(
                f"client {client_id} is already onboarded as {existing.client_name!r}; "
                "rotate its key with `connect rotate-key`, or `connect remove` it first"
            )
        enroll_key = new_enroll_key()
        profile = replace(profile, enroll_key_hash=hash_secret(enroll_key))
        try:
            self._profiles.put(profile)
        except ValueError as error:  # the name is another client's
            raise InvalidConnectSpec(str(error)) from error
        if self._transfer is not None:
            try:
                self._transfer.create(profile.client_name, profile.ssh_public_keys)
            except BaseException:
                self._profiles.delete(client_id)  # no profile without its SFTP user
                raise
        return Onboarded(profile, enroll_key)

    def rotate_key(self, client_id: str) -> Onboarded:
        """A new Enroll Key; files whose header carries the old one are rejected from now on."""
        profile = self.show(client_id)
        enroll_key = new_enroll_key()
        rotated = replace(profile, enroll_key_hash=hash_secret(enroll_key))
        try:
            self._profiles.put(rotated)
        except ValueError as error:
            raise InvalidConnectSpec(str(error)) from error
        return Onboarded(rotated, enroll_key)

    def show(self, client_id: str) -> ConnectProfile:
        profile = self._profiles.get_by_client(client_id)
        if profile is None:
            raise NotOnboarded(f"client {client_id} is not onboarded to Connect")
        return profile

    def remove(self, client_id: str) -> ConnectProfile:
        """The profile and the SFTP user go; files already in the bucket stay until their retention ends."""
        profile = self.show(client_id)
        if self._transfer is not None:
            self._transfer.delete(profile.client_name)
        self._profiles.delete(client_id)
        return profile
