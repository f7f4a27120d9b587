"""One Protocol per outside dependency. Services receive these; adapters implement them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Protocol

from phoneid.domain.carrier import CarrierResult, Redirect
from phoneid.domain.clients import Client
from phoneid.domain.connect import Batch, BatchState, ConnectProfile
from phoneid.domain.decisions import DecisionPage, DecisionQuery, DecisionRecord
from phoneid.domain.devicekeys import DeviceKey
from phoneid.domain.enrollment import Action, Enrollment, EnrollmentPage
from phoneid.domain.errors import PhoneIdError
from phoneid.domain.history import Append, StreamPage
from phoneid.domain.idempotency import KeyRecord
from phoneid.domain.identity import Identity
from phoneid.domain.merkle import Frontier
from phoneid.domain.monitor import MonitorState
from phoneid.domain.monitor_pass import MonitorPass, SegmentProgress
from phoneid.domain.push import PushSignal, PushSubscription
from phoneid.domain.session import Session
from phoneid.domain.signals import (
    ActivityCounts,
    ChangeEvent,
    KycClaim,
    KycResult,
    ListEntry,
    ListKind,
    NumberHistory,
)
from phoneid.domain.token_keys import KeyWindow, PublicKey, SealedKey


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SessionStore(Protocol):
    def create(self, session: Session) -> None: ...

    def get(self, client_id: str, correlation_id: str) -> Session | None:
        """The session of this client, or None: another client's session is never returned."""
        ...

    def save(self, old: Session, new: Session, now: datetime, keys: Sequence[DeviceKey] = ()) -> Session:
        """Write ``new`` if the stored session is still ``old`` (same version) and has not expired.

        ``keys`` (device keys the change binds) are written in the same transaction. Returns ``new``
        with its version bumped; raises ``TransitionRejected`` otherwise, writing nothing.
        """
        ...

    def put_pointer(self, kind: str, secret_hash: str, session: Session) -> None:
        """Remember which session a secret (Instant Link token, OIDC state) belongs to, until it expires."""
        ...

    def find_pointer(self, kind: str, secret_hash: str, now: datetime) -> tuple[str, str] | None:
        """(client id, correlationId) of the session the secret belongs to, while that session lives."""
        ...

    def expired(self, image: Mapping[str, Any]) -> Session | None:
        """The session a deleted item held (the table stream's image), or None for another item."""
        ...


class DeviceKeyStore(Protocol):
    def get(self, client_id: str, device_id: str) -> DeviceKey | None:
        """The client's key, or None: another client's key is never returned."""
        ...

    def revoke(self, client_id: str, device_id: str) -> bool: ...


class ClientStore(Protocol):
    def put(self, client: Client) -> None: ...

    def get(self, client_id: str) -> Client | None: ...

    def list(self) -> list[Client]: ...


class RefreshTokenStore(Protocol):
    def put(self, token_hash: str, client_id: str, expires_at: datetime) -> None: ...

    def consume(self, token_hash: str, client_id: str, now: datetime) -> bool:
        """Delete the client's token, once: False when unknown, used, expired or another client's."""
        ...


class IdentitySource(Protocol):
    def find(self, phone_number: str) -> Identity | None: ...


class IdentityStore(IdentitySource, Protocol):
    def put_many(self, identities: Iterable[Identity]) -> int: ...


class SigningKey(Protocol):
    """One key that signs tokens: its public half as a JWK, and the signature it makes."""

    @property
    def jwk(self) -> Mapping[str, Any]:
        """The public key as a JWK with ``kid``, ``alg`` and ``use``."""
        ...

    def sign(self, signing_input: bytes) -> bytes:
        """The JWS signature (raw r || s for ES256) over ``signing_input``."""
        ...


class PrivateSigningKey(SigningKey, Protocol):
    @property
    def scalar(self) -> bytes:
        """The private key's secret, as the sealer seals it."""
        ...


class SigningKeyMaker(Protocol):
    """Makes signing keys: new random ones, or one from a sealed secret."""

    def generate(self) -> PrivateSigningKey: ...

    def load(self, scalar: bytes) -> PrivateSigningKey: ...


class TokenSigner(Protocol):
    """The key that signs the tokens issued now (the key of the current window)."""

    def signing_key(self) -> SigningKey: ...


class VerificationKeys(Protocol):
    """The public keys of the windows whose tokens may be valid now or soon. No private half."""

    def verification_key(self, kid: str) -> PublicKey | None:
        """The public key ``kid`` names, if its tokens may still be valid, else None."""
        ...

    def published(self) -> list[PublicKey]:
        """The keys for the JWKS document: the next window's before it opens."""
        ...


class TokenKeyStore(Protocol):
    """The table of the windows' keys. Verifiers read public attributes only; the signers read the
    sealed half of the window they sign in; only the rotation writes."""

    def public_keys(self, windows: Sequence[KeyWindow]) -> list[PublicKey]: ...

    def sealed(self, window: KeyWindow) -> SealedKey | None: ...

    def create(self, key: SealedKey) -> bool:
        """Store a new window's key unless the window has one (False then): one conditional write."""
        ...

    def replace(self, key: SealedKey) -> None:
        """Store a window's key in place of the one it has (an emergency replacement)."""
        ...

    def forget_private(self, window: KeyWindow) -> bool:
        """Delete the window's sealed private half; False when there was none."""
        ...


class KeySealer(Protocol):
    """Seals a private key for one window (KMS Encrypt under a context naming the window)."""

    def seal(self, private_key: bytes, window: KeyWindow) -> bytes: ...

    def unseal(self, sealed: bytes, window: KeyWindow) -> bytes: ...


class KeyRotationTrigger(Protocol):
    """Asks the key rotation to run now (a signer that found no key for its window)."""

    def rotate_now(self) -> None: ...


class PiiCipher(Protocol):
    """Encrypts PII bound to a context: a ciphertext only decrypts with the same context."""

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes: ...

    def encrypt_many(self, records: Sequence[tuple[bytes, Mapping[str, str]]]) -> list[bytes]:
        """``encrypt`` of each (plaintext, context), in order, at the cost of about one call."""
        ...

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes: ...


class IdempotencyStore(Protocol):
    """One record per client and Idempotency-Key; every write is conditional."""

    def claim(self, record: KeyRecord, now: datetime) -> KeyRecord | None:
        """Write ``record`` when its key has no record, or one expired or abandoned at ``now``;
        otherwise write nothing and return the record that holds the key."""
        ...

    def complete(self, record: KeyRecord, response: bytes) -> bool:
        """Keep the sealed answer of ``record``'s request; False when its owner no longer holds it."""
        ...

    def release(self, record: KeyRecord) -> None:
        """Delete ``record`` if its owner still holds it: the key is free for a retry."""
        ...


class RateLimiter(Protocol):
    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        """Count one request for ``key`` in the window starting at ``window_start`` (epoch seconds).

        Returns the number of requests counted in that window, this one included.
        """
        ...

    def counts(self, keys: Sequence[tuple[str, int]]) -> list[int]:
        """The hits so far of each ``(key, window_start)``, in order (0 for none); counts nothing."""
        ...

    def release(self, key: str, window_start: int) -> None:
        """Take back one hit counted for ``key`` in that window: what it counted did not happen."""
        ...


class SmsSender(Protocol):
    def send(self, phone_number: str, text: str) -> None: ...


class CodeMac(Protocol):
    """A keyed MAC for one-time codes: the key never leaves the key service, only MACs are stored."""

    def digest(self, message: str) -> str: ...

    def matches(self, message: str, digest: str) -> bool:
        """Constant-time: whether ``message`` has MAC ``digest``."""
        ...


class KeyedDigest(Protocol):
    """A keyed MAC whose key the code never handles in clear at rest: the same message, the same digest."""

    def digest(self, message: str) -> str: ...


class CarrierVerifier(Protocol):
    """Mobile Auth: the network says whether the device's SIM has the number."""

    def begin(self, *, state: str, redirect_uri: str, phone_number: str | None) -> Redirect: ...

    def finish(self, *, code: str, redirect_uri: str, phone_number: str | None) -> CarrierResult: ...


class SocketNotifier(Protocol):
    """Pushes a message to a client's WebSocket (API Gateway PostToConnection)."""

    def notify(self, endpoint: str, connection_id: str, message: Mapping[str, Any]) -> bool:
        """False when the connection is gone."""
        ...


# --- fraud-policy signal sources (one port per source; adapters in phoneid.adapters) -----------


class SimSwapSource(Protocol):
    """CAMARA SIM Swap: when the number's SIM last changed (None: no change known)."""

    def latest_change(self, phone_number: str) -> datetime | None: ...


class CallForwardingSource(Protocol):
    """CAMARA Call Forwarding Signal: whether unconditional forwarding is on."""

    def unconditional(self, phone_number: str) -> bool: ...


class TenureSource(Protocol):
    """CAMARA KYC Tenure: whether the subscriber has held the number since ``since``."""

    def held_since(self, phone_number: str, since: date) -> bool: ...


class NumberRecyclingSource(Protocol):
    """CAMARA Number Recycling: whether the subscriber changed after ``since``."""

    def recycled_since(self, phone_number: str, since: date) -> bool: ...


class KycMatchSource(Protocol):
    """CAMARA KYC Match: the operator's subscriber data compared with the claim, field by field."""

    def match(self, phone_number: str, claim: KycClaim) -> KycResult: ...


class DeviceStatusSource(Protocol):
    """CAMARA Device Reachability and Roaming Status."""

    def reachable(self, phone_number: str) -> bool: ...

    def roaming_country(self, phone_number: str) -> str | None:
        """The ISO country the device roams in; None when it is at home."""
        ...


class SignalLists(Protocol):
    """The operator's lists (public SMS numbers, line-type overrides, watch lists, ...)."""

    def lookup(self, kind: ListKind, keys: Sequence[str]) -> dict[str, ListEntry]:
        """The entries of ``kind`` under any of ``keys`` (normalised keys), by key."""
        ...

    def put_many(self, entries: Iterable[ListEntry]) -> int: ...


class ActivityLog(Protocol):
    """Checks PhoneID made, per client, for the risk signals."""

    def record(self, client_id: str, phone_number: str, attributes: Sequence[str], at: datetime) -> None: ...

    def counts(
        self,
        client_id: str,
        phone_number: str,
        attributes: Sequence[str],
        *,
        recent_since: datetime,
        history_since: datetime,
    ) -> ActivityCounts: ...


class ChangeEventLog(Protocol):
    """Change events found on numbers (by the monitor, or imported port events)."""

    def append(self, events: Sequence[ChangeEvent]) -> None: ...

    def since(self, client_id: str, phone_number: str, since: datetime) -> list[ChangeEvent]: ...


class NumberHistorySource(Protocol):
    """What Identity Manager knows of a number: identities enrolled on it, and since when."""

    def history(self, client_id: str, phone_number: str, short_tenure_since: datetime) -> NumberHistory: ...


# --- Identity Manager -----------------------------------------------------------------------------


class EnrollmentStore(NumberHistorySource, Protocol):
    """Identity Manager's identities, per client: no client can read, list or change another's.

    A disenrolled identity is a tombstone without PII that no method returns. Listings and the
    monitor's iteration do not decrypt PII (their enrollments have ``pii=None``).
    """

    def enroll(self, enrollment: Enrollment) -> tuple[Enrollment, bool]:
        """Store ``enrollment``, or return the identity that already holds its place, writing nothing.

        The place is the client's ``clientCustomerId``; without one, the number's identity with no
        ``clientCustomerId``, when that one is active (an inactive one gives its place up). Atomic:
        concurrent calls for one place create one identity. Returns (identity, created); an existing
        identity comes without its PII (``pii=None``), so enrolling needs KMS Encrypt only.
        """
        ...

    def enroll_many(self, enrollments: Sequence[Enrollment]) -> list[tuple[Enrollment, bool] | PhoneIdError]:
        """``enroll`` of each, in order, with the outcome of enrolling them one after another, in a
        few calls for all; an enrollment that fails has its error as its result."""
        ...

    def get(self, client_id: str, service_id: str, *, with_pii: bool = True) -> Enrollment | None:
        """The client's identity, with its PII unless ``with_pii`` is False (nothing decrypted);
        None when unknown, another client's or disenrolled."""
        ...

    def apply(self, client_id: str, service_id: str, action: Action, now: datetime) -> Enrollment | None:
        """One conditional write of ``action``; None when there is no such identity (or it is disenrolled).

        Disenrolling deletes the PII and frees the identity's place in the same transaction.
        """
        ...

    def by_phone(self, client_id: str, phone_number: str) -> list[Enrollment]:
        """The client's active and inactive identities of the number, oldest first, with their PII."""
        ...

    def page(
        self, client_id: str, *, limit: int, after: str | None, include_inactive: bool
    ) -> EnrollmentPage:
        """One page of the client's identities, oldest first, after ``after`` (a previous page's
        ``last_position``, authenticated by the caller).

        An ``after`` that is no position of this store's form raises ``MalformedRequest`` (startKey).
        """
        ...

    def active_segment_page(
        self, segment: int, total_segments: int, position: str | None, page_size: int = 100
    ) -> tuple[list[Enrollment], str | None]:
        """One page of active identities of one segment of a parallel scan, from ``position``
        (None: the segment's start), and the position after it (None: the segment is done)."""
        ...

    def approximate_count(self) -> int:
        """About how many items the store holds (a monitor pass's plan)."""
        ...


# --- change-event webhooks ------------------------------------------------------------------------


class MonitorStateStore(Protocol):
    """What the change monitor last saw of each identity, kept on the identity (and dropped with it)."""

    def monitor_state(self, client_id: str, service_id: str) -> MonitorState | None: ...

    def save_monitor_state(self, client_id: str, service_id: str, state: MonitorState) -> bool:
        """Save ``state`` on the identity while it is active; False (nothing written) otherwise."""
        ...


class MonitorPassStore(Protocol):
    """Each monitor pass's plan and totals, and the progress of each of its segments."""

    def plan(self, planned: MonitorPass) -> MonitorPass:
        """Keep ``planned``, or return the pass already planned under its id."""
        ...

    def get(self, pass_id: str) -> MonitorPass | None: ...

    def latest(self) -> MonitorPass | None: ...

    def progress(self, pass_id: str, segment: int) -> SegmentProgress | None: ...

    def save_progress(self, pass_id: str, progress: SegmentProgress, now: datetime) -> None: ...

    def segments(self, pass_id: str) -> list[SegmentProgress]: ...

    def save_totals(self, summary: MonitorPass) -> None: ...


class PushSubscriptionStore(Protocol):
    """The stack's CAMARA subscriptions: found by the sink token's selector (the callback) and by
    identity (the monitor, disenrollment), and the notifications already taken (de-duplication)."""

    def put(self, subscription: PushSubscription) -> None: ...

    def by_selector(self, selector: str) -> PushSubscription | None:
        """The subscription of a sink token, ended ones included (while their tombstone lasts)."""
        ...

    def for_identity(self, client_id: str, service_id: str) -> list[PushSubscription]:
        """The identity's subscriptions that have not ended."""
        ...

    def end(self, subscription: PushSubscription, now: datetime) -> None:
        """Ended: no longer the identity's; its token answers "gone" for a while, then is forgotten."""
        ...

    def claim_event(self, key: str, now: datetime) -> bool:
        """True the first time ``key`` is claimed (for a few days); False for a repeat."""
        ...

    def release_event(self, key: str) -> None: ...


class OperatorSubscriptions(Protocol):
    """The operator's CAMARA subscriptions APIs (SIM Swap, Device Reachability and Roaming Status)."""

    def create(
        self, signal: PushSignal, phone_number: str, *, sink: str, token: str, expires_at: datetime
    ) -> tuple[str, datetime | None]:
        """(subscription id, when the operator says it expires); SignalSourceError on failure."""
        ...

    def delete(self, signal: PushSignal, subscription_id: str) -> None:
        """Gone at the operator (an unknown id too); SignalSourceError when it could not say."""
        ...


class WebhookQueue(Protocol):
    """Change events waiting for delivery to their client's webhook (SQS)."""

    def send(self, event: ChangeEvent) -> None: ...

    def retry_later(self, receipt: str, seconds: int) -> None:
        """Keep the received message ``receipt`` hidden for ``seconds`` before it is tried again."""
        ...


class WebhookSender(Protocol):
    """POSTs one delivery to a receiver."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """The receiver's HTTP status; ``WebhookUnreachable`` when there is none (network, timeout),
        ``WebhookRefused`` when PhoneID would not connect (the URL or an address of its host is one
        PhoneID does not deliver to)."""
        ...


class HostResolver(Protocol):
    """Names to addresses (DNS), for the webhook sender to check before it connects."""

    def addresses(self, host: str, port: int) -> list[str]:
        """Every IP address ``host`` resolves to for a TCP connection, as text; ``OSError`` when
        it resolves to none."""
        ...


# --- Connect (batch files) ---------------------------------------------------------------------


class ConnectProfiles(Protocol):
    """Onboarded Connect clients, by file-name prefix (client name) or by client id."""

    def get_by_name(self, client_name: str) -> ConnectProfile | None: ...

    def get_by_client(self, client_id: str) -> ConnectProfile | None: ...

    def put(self, profile: ConnectProfile) -> None:
        """Create or replace; a client name already taken by another client is refused (ValueError)."""
        ...

    def delete(self, client_id: str) -> bool: ...


class ObjectStore(Protocol):
    """The Connect bucket: streamed reads and writes, so no file is ever held whole in memory."""

    def iter_lines(self, key: str, version_id: str | None = None) -> Iterator[str]:
        """The object's text lines (UTF-8, a BOM removed, CRLF or LF), read as a stream
        (``version_id``: that version of the object, else the latest)."""
        ...

    def iter_text(self, key: str, version_id: str | None = None) -> Iterator[str]:
        """The object's text (UTF-8, a BOM removed) in pieces of bounded size, line ends included,
        read as a stream: for a reader that must not hold a line whole, however long it is."""
        ...

    def get_text(self, key: str) -> str: ...

    def put_text(self, key: str, text: str) -> None: ...

    def open_writer(self, key: str) -> TextSink:
        """A text sink written in parts (multipart upload); the object appears when it is closed."""
        ...

    def exists(self, key: str) -> bool: ...

    def delete_prefix(self, prefix: str) -> int: ...


class TextSink(Protocol):
    def write(self, text: str) -> None: ...

    def close(self) -> None: ...


class Mailer(Protocol):
    def send(self, to: Sequence[str], subject: str, text: str) -> None: ...


class BatchStates(Protocol):
    """Connect batches (``ConnectBatchesTable``): every state change is a conditional write."""

    def claim(self, batch: Batch) -> bool:
        """Store ``batch`` unless a batch with its id exists (a conditional put); False, writing
        nothing, when it is taken: the second execution for one object stops there."""
        ...

    def update(self, batch: Batch, expected: BatchState) -> bool:
        """Replace the stored batch while its state is still ``expected``; False (nothing written)
        when it is not, or when there is no such batch."""
        ...

    def get(self, batch_id: str) -> Batch | None: ...

    def list_recent(self, client_name: str | None = None, limit: int = 20) -> list[Batch]:
        """The newest batches first (by ``created_at``), of one client or of all."""
        ...


class DecisionStore(Protocol):
    """Decision records (``DecisionsTable``) and each client's tallies per day, kept as they are written."""

    def add(self, records: Sequence[DecisionRecord], *, once: str | None = None) -> bool:
        """Write the records and add their tallies to their days, counted at most once: one record
        is counted when its id is new; many under ``once`` (a batch's or chunk's id) when that is new.
        False (tallies untouched, records rewritten as they were) when already counted."""
        ...

    def get(self, client_id: str, decision_id: str) -> DecisionRecord | None: ...

    def page(self, client_id: str, query: DecisionQuery, *, limit: int, after: str | None) -> DecisionPage:
        """Newest first; ``after`` is a page's ``last_position``."""
        ...

    def days(self, client_id: str, first: date, last: date) -> dict[date, dict[str, int]]:
        """The tallies of each day from ``first`` to ``last`` (inclusive) that has any."""
        ...

    def erase(self, client_id: str, number_mac: str) -> int:
        """Delete every record of the number's MAC, taking them off their days' tallies; how many."""
        ...


class DecisionStream(Protocol):
    """The decision records table's changes, shard by shard (docs/adr/0120)."""

    def shards(self) -> list[str]: ...

    def read(self, shard_id: str, after: str | None, limit: int) -> StreamPage: ...


class HistoryStore(Protocol):
    """Each client's history tree, and how far each stream shard has been appended."""

    most_clients: int  # clients' appends one commit takes at most

    def position(self, shard_id: str) -> tuple[str | None, bool]: ...

    def frontiers(self, client_ids: Iterable[str]) -> dict[str, Frontier]: ...

    def commit(
        self, shard_id: str, expected: str | None, after: str, appends: Sequence[Append], *, ended: bool
    ) -> None:
        """All or nothing; ``HistoryContended`` when another run moved the shard or a tree first."""
        ...

    def leaves(self, client_id: str, count: int) -> list[tuple[str, bytes]]: ...
