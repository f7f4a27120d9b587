"""Connect onboarding (what is provisioned for a batch client, docs/connect.md): the client name its
files carry, the verification types it may send, its notification addresses and the Enroll Key its
files' header must carry — shown once, stored only as a salted hash — and what the stack's Connect
transport (``ConnectTransport``) gives the client to send files with:

- ``sftp``: an SFTP login (its SSH public keys). In AWS the user is a Transfer Family user
  (``SftpUsers``); locally the SFTP server reads the profiles themselves at login.
- ``s3``: nothing standing. The operator issues, per file, a presigned URL to PUT it to the client's
  upload prefix and URLs to GET its results (``batch_urls``; docs/adr/0077-presigned-urls-per-file.md).
- ``none``: nothing; only files the operator puts into the bucket run.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Literal, NamedTuple, Protocol

from phoneid.domain.connect import (
    VERIFICATION_TYPES,
    ConnectProfile,
    ConnectTransport,
    download_key,
    errors_file_name,
    output_file_name,
    parse_file_name,
    rejected_file_name,
    upload_key,
    valid_client_name,
)
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


class PresignedUrls(Protocol):
    """URLs of the Connect bucket that let whoever holds one make exactly one kind of request (PUT or
    GET) on one key until it expires, with no credentials of their own (``s3`` transport)."""

    def url(self, method: Literal["PUT", "GET"], key: str, expires_in: int) -> str: ...


# A SigV4 presigned URL lives 7 days at most; S3 refuses a longer X-Amz-Expires.
MAX_URL_LIFETIME = timedelta(days=7)
MIN_URL_LIFETIME = timedelta(minutes=1)
DEFAULT_URL_LIFETIME = timedelta(hours=24)


class Onboarded(NamedTuple):
    profile: ConnectProfile
    enroll_key: str  # shown once; only its hash is stored


class BatchUrls(NamedTuple):
    """What a client needs to send one file and fetch its results over plain HTTPS."""

    profile: ConnectProfile
    file_name: str
    key: str  # where the file goes: clients/{name}/upload/{file}
    expires_at: datetime
    upload: str | None  # the PUT URL; None when only the results' URLs were asked for
    results: Mapping[str, tuple[str, str]]  # output, errors, rejected -> (file name, GET URL)


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


def _no_sftp(transport: ConnectTransport) -> str:
    return (
        f"SSH keys are SFTP logins, and this stack's Connect transport is {transport.value} (no SFTP "
        "server): onboard without --ssh-key"
        + (
            "; the client sends each file to a URL from `phoneid connect upload-url`"
            if transport is ConnectTransport.S3
            else ""
        )
    )


def _no_urls(transport: ConnectTransport) -> str:
    if transport is ConnectTransport.SFTP:
        return (
            "this stack's Connect transport is sftp: clients put files over SFTP "
            "(`phoneid connect show CLIENT_ID` gives the login), not to URLs"
        )
    return (
        f"this stack's Connect transport is {transport.value}: it issues no upload URLs, and only files "
        "the operator puts into the bucket run (deploy with ConnectTransport=s3 to issue URLs)"
    )


class ConnectOnboarding:
    def __init__(
        self,
        profiles: ConnectProfiles,
        clients: ClientStore,
        clock: Clock,
        transfer: SftpUsers | None = None,
        transport: ConnectTransport = ConnectTransport.SFTP,
        urls: PresignedUrls | None = None,
    ) -> None:
        self._profiles = profiles
        self._clients = clients
        self._clock = clock
        self._transport = transport
        # SFTP users exist only on a stack whose transport is SFTP.
        self._transfer = transfer if transport is ConnectTransport.SFTP else None
        self._urls = urls

    @property
    def transport(self) -> ConnectTransport:
        return self._transport

    def onboard(
        self,
        client_id: str,
        name: str,
        types: Iterable[str],
        ssh_keys: Iterable[str] = (),
        emails: Iterable[str] = (),
    ) -> Onboarded:
        """Provision Connect for an existing, enabled client; the Enroll Key is in the answer only.
        SSH keys are needed on an ``sftp`` stack and refused on any other (they would log in nowhere)."""
        if self._transport is ConnectTransport.SFTP:
            logins = check_ssh_keys(ssh_keys)
        elif any(line.strip() for line in ssh_keys):
            raise InvalidConnectSpec(_no_sftp(self._transport))
        else:
            logins = ()
        profile = ConnectProfile(
            client_id=client_id,
            client_name=check_client_name(name, transfer_user=self._transfer is not None),
            types=check_types(types),
            enroll_key_hash="",
            emails=check_emails(emails),
            ssh_public_keys=logins,
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

    def batch_urls(
        self,
        client_id: str,
        file_name: str,
        lifetime: timedelta = DEFAULT_URL_LIFETIME,
        *,
        upload: bool = True,
    ) -> BatchUrls:
        """The URLs to PUT one file of the client (``upload``) and to GET its output, error and
        rejected files, each valid for ``lifetime`` (a minute to 7 days). The file name is checked as
        the workflow checks it (the naming rule, this client's name, a type it may send), so a wrong
        name is refused here rather than rejected after the upload."""
        if self._transport is not ConnectTransport.S3 or self._urls is None:
            raise InvalidConnectSpec(_no_urls(self._transport))
        if not MIN_URL_LIFETIME <= lifetime <= MAX_URL_LIFETIME:
            raise InvalidConnectSpec("a URL's lifetime is a minute to 7 days (S3 refuses longer ones)")
        profile = self.show(client_id)
        client = self._clients.get(client_id)
        if client is None or not client.enabled:
            raise InvalidConnectSpec(f"client {client_id} is disabled: its files would be rejected")
        parsed = parse_file_name(file_name)
        if parsed is None:
            raise InvalidConnectSpec(
                f"file name {file_name!r}: expected {profile.client_name}_{{US|INTL}}_{{verifiedUser|"
                "humanAssurance}_YYYYMMDDHHMMSS.csv"
            )
        if parsed.client_name != profile.client_name:
            raise InvalidConnectSpec(
                f"file name {file_name!r} is for client {parsed.client_name!r}; "
                f"client {client_id}'s files start with {profile.client_name + '_'!r}"
            )
        if parsed.verification_type.value not in profile.types:
            raise InvalidConnectSpec(
                f"file name {file_name!r}: client {profile.client_name!r} may send "
                f"{', '.join(sorted(profile.types))}, not {parsed.verification_type.value}"
            )
        seconds = int(lifetime.total_seconds())
        key = upload_key(profile.client_name, file_name)
        results = {
            kind: (name, self._urls.url("GET", download_key(profile.client_name, name), seconds))
            for kind, name in (
                ("output", output_file_name(file_name)),
                ("errors", errors_file_name(file_name)),
                ("rejected", rejected_file_name(file_name)),
            )
        }
        return BatchUrls(
            profile=profile,
            file_name=file_name,
            key=key,
            expires_at=self._clock.now() + timedelta(seconds=seconds),
            upload=self._urls.url("PUT", key, seconds) if upload else None,
            results=results,
        )

    def remove(self, client_id: str) -> ConnectProfile:
        """The profile and the SFTP user go; files already in the bucket stay until their retention ends."""
        profile = self.show(client_id)
        if self._transfer is not None:
            self._transfer.delete(profile.client_name)
        self._profiles.delete(client_id)
        return profile
