"""In-memory stand-ins for the ports, with the same semantics as the real adapters (conditional
writes included), for unit tests that open no sockets."""

from __future__ import annotations

import io
import socket
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.hashes import SHA256

from phoneid.adapters.es256 import jwk_of
from phoneid.domain.clients import Client
from phoneid.domain.connect import Batch, BatchState, ConnectProfile
from phoneid.domain.decisions import DecisionPage, DecisionQuery, DecisionRecord, added
from phoneid.domain.devicekeys import DeviceKey, KeyStatus
from phoneid.domain.errors import PhoneIdError
from phoneid.domain.idempotency import KeyRecord, RecordStatus
from phoneid.domain.identity import Identity
from phoneid.domain.push import PushSignal, PushSubscription
from phoneid.domain.session import Session, TransitionRejected
from phoneid.domain.signals import ActivityCounts, ChangeEvent, ListEntry, ListKind
from phoneid.domain.token_keys import PublicKey

START = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = START) -> None:
        self.current = start

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


class InMemoryDeviceKeyStore:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], DeviceKey] = {}

    def get(self, client_id: str, device_id: str) -> DeviceKey | None:
        return self.items.get((client_id, device_id))

    def revoke(self, client_id: str, device_id: str) -> bool:
        key = self.items.get((client_id, device_id))
        if key is None:
            return False
        self.items[(client_id, device_id)] = replace(key, status=KeyStatus.REVOKED)
        return True


class InMemorySessionStore:
    """Conditional on the version read and on expiry, like the DynamoDB adapter."""

    def __init__(self, device_keys: InMemoryDeviceKeyStore | None = None) -> None:
        self.items: dict[tuple[str, str], Session] = {}
        self.pointers: dict[str, tuple[str, str, datetime]] = {}
        self.device_keys = device_keys or InMemoryDeviceKeyStore()
        self._lock = threading.Lock()

    def create(self, session: Session) -> None:
        with self._lock:
            key = (session.client_id, session.correlation_id)
            assert key not in self.items
            self.items[key] = session

    def get(self, client_id: str, correlation_id: str) -> Session | None:
        return self.items.get((client_id, correlation_id))

    def save(self, old: Session, new: Session, now: datetime, keys: Sequence[DeviceKey] = ()) -> Session:
        with self._lock:
            key = (old.client_id, old.correlation_id)
            current = self.items.get(key)
            if current is None or current.version != old.version or current.expired(now):
                raise TransitionRejected()
            saved = replace(new, version=old.version + 1)
            self.items[key] = saved
            for device_key in keys:
                self.device_keys.items[(device_key.client_id, device_key.device_id)] = device_key
            return saved

    def put_pointer(self, kind: str, secret_hash: str, session: Session) -> None:
        self.pointers[f"{kind}#{secret_hash}"] = (
            session.client_id,
            session.correlation_id,
            session.expires_at,
        )

    def find_pointer(self, kind: str, secret_hash: str, now: datetime) -> tuple[str, str] | None:
        pointer = self.pointers.get(f"{kind}#{secret_hash}")
        if pointer is None or pointer[2] <= now:
            return None
        return pointer[0], pointer[1]


class InMemoryClientStore:
    def __init__(self) -> None:
        self.items: dict[str, Client] = {}

    def put(self, client: Client) -> None:
        self.items[client.client_id] = client

    def get(self, client_id: str) -> Client | None:
        return self.items.get(client_id)

    def list(self) -> list[Client]:
        return sorted(self.items.values(), key=lambda c: c.created_at)


class InMemoryRefreshTokenStore:
    def __init__(self) -> None:
        self.items: dict[str, tuple[str, datetime]] = {}

    def put(self, token_hash: str, client_id: str, expires_at: datetime) -> None:
        self.items[token_hash] = (client_id, expires_at)

    def consume(self, token_hash: str, client_id: str, now: datetime) -> bool:
        entry = self.items.get(token_hash)
        if entry is None or entry[0] != client_id or entry[1] <= now:
            return False
        del self.items[token_hash]
        return True


class InMemoryIdentityStore:
    def __init__(self, identities: Iterable[Identity] = ()) -> None:
        self.items = {i.phone_number: i for i in identities}

    def find(self, phone_number: str) -> Identity | None:
        return self.items.get(phone_number)

    def put_many(self, identities: Iterable[Identity]) -> int:
        count = 0
        for identity in identities:
            self.items[identity.phone_number] = identity
            count += 1
        return count


class InMemoryRateLimiter:
    def __init__(self) -> None:
        self.hits: dict[str, int] = {}

    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        name = f"{key}#{window_start}"
        self.hits[name] = self.hits.get(name, 0) + 1
        return self.hits[name]

    def counts(self, keys: Sequence[tuple[str, int]]) -> list[int]:
        return [self.hits.get(f"{key}#{window_start}", 0) for key, window_start in keys]

    def release(self, key: str, window_start: int) -> None:
        name = f"{key}#{window_start}"
        if self.hits.get(name, 0) > 0:
            self.hits[name] -= 1


class LocalSigner:
    """One ES256 key held in memory, signing as the stack's keys do (raw r||s), its window wide open."""

    def __init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._jwk = jwk_of(self._key.public_key())
        self._public = PublicKey(
            self._jwk, datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)
        )

    @property
    def jwk(self) -> Mapping[str, Any]:
        return self._jwk

    def signing_key(self) -> LocalSigner:
        return self

    def verification_key(self, kid: str) -> PublicKey | None:
        return self._public if kid == self._jwk["kid"] else None

    def published(self) -> list[PublicKey]:
        return [self._public]

    def sign(self, signing_input: bytes) -> bytes:
        r, s = decode_dss_signature(self._key.sign(signing_input, ec.ECDSA(SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    @property
    def private_key(self) -> ec.EllipticCurvePrivateKey:
        return self._key


class ContextCipher:
    """Reversible, and refuses a ciphertext presented with another context, like KMS."""

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        return repr(sorted(context.items())).encode() + b"\x00" + plaintext[::-1]

    def encrypt_many(self, records: Sequence[tuple[bytes, Mapping[str, str]]]) -> list[bytes]:
        return [self.encrypt(plaintext, context) for plaintext, context in records]

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        bound, _, body = ciphertext.partition(b"\x00")
        if bound != repr(sorted(context.items())).encode():
            raise ValueError("encryption context mismatch")
        return body[::-1]


class InMemorySignalLists:
    """Entries by kind and key; a later entry under the same kind and key replaces the earlier."""

    def __init__(self, entries: Iterable[ListEntry] = ()) -> None:
        self.items: dict[tuple[ListKind, str], ListEntry] = {}
        self.put_many(entries)

    def lookup(self, kind: ListKind, keys: Sequence[str]) -> dict[str, ListEntry]:
        return {key: self.items[(kind, key)] for key in keys if (kind, key) in self.items}

    def put_many(self, entries: Iterable[ListEntry]) -> int:
        count = 0
        for entry in entries:
            self.items[(entry.kind, entry.key)] = entry
            count += 1
        return count


class InMemoryActivityLog:
    """Checks per client; windows include their start, like the DynamoDB adapter's key ranges."""

    def __init__(self) -> None:
        self.checks: list[tuple[str, str, frozenset[str], datetime]] = []

    def record(self, client_id: str, phone_number: str, attributes: Sequence[str], at: datetime) -> None:
        self.checks.append((client_id, phone_number, frozenset(attributes), at))

    def counts(
        self,
        client_id: str,
        phone_number: str,
        attributes: Sequence[str],
        *,
        recent_since: datetime,
        history_since: datetime,
    ) -> ActivityCounts:
        mine = [check for check in self.checks if check[0] == client_id]
        number = [at for _, phone, _, at in mine if phone == phone_number]
        others = {
            phone
            for _, phone, seen, at in mine
            if phone != phone_number and at >= recent_since and seen & set(attributes)
        }
        return ActivityCounts(
            prior=sum(1 for at in number if at >= history_since),
            recent=sum(1 for at in number if at >= recent_since),
            recent_sharing_attributes=len(others),
        )


class InMemoryChangeEventLog:
    """Change events per client and number; appending an event id again changes nothing."""

    def __init__(self) -> None:
        self.events: dict[tuple[str, str, datetime, str], ChangeEvent] = {}

    def append(self, events: Sequence[ChangeEvent]) -> None:
        for event in events:
            self.events[(event.client_id, event.phone_number, event.occurred_at, event.event_id)] = event

    def since(self, client_id: str, phone_number: str, since: datetime) -> list[ChangeEvent]:
        found = [
            event
            for (client, phone, occurred, _), event in self.events.items()
            if client == client_id and phone == phone_number and occurred >= since
        ]
        return sorted(found, key=lambda e: (e.occurred_at, e.event_id))


# --- Identity Manager ---------------------------------------------------------------------------

from collections.abc import Iterator  # noqa: E402 - this section is appended
from contextlib import contextmanager  # noqa: E402

from phoneid.domain.clients import Caller  # noqa: E402
from phoneid.domain.enrollment import (  # noqa: E402
    ROSTER_LIMIT,
    Action,
    Enrollment,
    EnrollmentPage,
    Pii,
    Status,
    keeps_place,
    number_history,
    oldest_first,
)
from phoneid.domain.errors import MalformedRequest  # noqa: E402
from phoneid.domain.signals import NumberHistory  # noqa: E402
from phoneid.services.identity_manager import Enrolled, Enrollee, IdentityManager  # noqa: E402


class InMemoryEnrollmentStore:
    """Identity Manager's identities with the DynamoDB adapter's rules: one identity per place (the
    clientCustomerId, or the number's active identity without one: who keeps it is the domain's
    ``keeps_place``, as for the adapter), tombstones nobody sees, opaque page keys that only their own
    client may use; a number's history is the domain's ``number_history`` of what it holds.

    Its indexes can lag as the adapter's do (``indexes_behind``): lists then show the identities as
    they stood, while a number's reads still find what its roster lists (up to ``ROSTER_LIMIT`` per
    client and number) and see each identity as it is now."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Enrollment] = {}
        self.places: dict[str, str] = {}  # place -> serviceId
        self.rosters: dict[tuple[str, str], set[str]] = {}  # (client, number) -> serviceIds
        self._indexed: dict[tuple[str, str], Enrollment] | None = None  # the indexes, while behind
        self._lock = threading.Lock()

    @contextmanager
    def indexes_behind(self) -> Iterator[None]:
        """While the block runs, the indexes hold the identities as they stood when it began."""
        self._indexed = dict(self.items)
        try:
            yield
        finally:
            self._indexed = None

    @staticmethod
    def _place(enrollment: Enrollment) -> str:
        if enrollment.client_customer_id is not None:
            return f"{enrollment.client_id}#customer#{enrollment.client_customer_id}"
        return f"{enrollment.client_id}#number#{enrollment.phone_number}"

    def _held(self, client_id: str) -> list[Enrollment]:
        """The client's identities as its index shows them (as they stood, while behind)."""
        indexed = self.items if self._indexed is None else self._indexed
        return oldest_first(e for (client, _), e in indexed.items() if client == client_id and e.exists)

    def enroll(self, enrollment: Enrollment) -> tuple[Enrollment, bool]:
        with self._lock:
            place = self._place(enrollment)
            holder = self.items.get((enrollment.client_id, self.places.get(place, "")))
            if holder is not None and keeps_place(holder, enrollment):
                return replace(holder, pii=None), False
            self.items[(enrollment.client_id, enrollment.service_id)] = enrollment
            self.places[place] = enrollment.service_id
            roster = self.rosters.setdefault((enrollment.client_id, enrollment.phone_number), set())
            if len(roster) < ROSTER_LIMIT:
                roster.add(enrollment.service_id)
            return enrollment, True

    def enroll_many(self, enrollments: Sequence[Enrollment]) -> list[tuple[Enrollment, bool] | PhoneIdError]:
        return [self.enroll(enrollment) for enrollment in enrollments]

    def get(self, client_id: str, service_id: str, *, with_pii: bool = True) -> Enrollment | None:
        found = self.items.get((client_id, service_id))
        return found if found is not None and found.exists else None

    def apply(self, client_id: str, service_id: str, action: Action, now: datetime) -> Enrollment | None:
        with self._lock:
            found = self.get(client_id, service_id)
            if found is None:
                return None
            changed = found.apply(action, now)
            self.items[(client_id, service_id)] = changed
            if changed.status == Status.DISENROLLED:
                if self.places.get(self._place(found)) == service_id:
                    del self.places[self._place(found)]
                roster = self.rosters.get((client_id, found.phone_number), set())
                roster.discard(service_id)
                if not roster:
                    self.rosters.pop((client_id, found.phone_number), None)
            return changed

    def by_phone(self, client_id: str, phone_number: str) -> list[Enrollment]:
        """What the roster lists and the index holds, each as it is now."""
        ids = set(self.rosters.get((client_id, phone_number), ()))
        ids |= {e.service_id for e in self._held(client_id) if e.phone_number == phone_number}
        now = (self.get(client_id, service_id) for service_id in ids)
        return oldest_first(e for e in now if e is not None and e.phone_number == phone_number)

    def history(self, client_id: str, phone_number: str, short_tenure_since: datetime) -> NumberHistory:
        return number_history(
            [replace(e, pii=None) for e in self.by_phone(client_id, phone_number)], short_tenure_since
        )

    def page(
        self, client_id: str, *, limit: int, after: str | None, include_inactive: bool
    ) -> EnrollmentPage:
        """Positions are serviceIds."""
        listed = [replace(e, pii=None) for e in self._held(client_id) if include_inactive or e.active]
        start = 0
        if after is not None:
            ids = [e.service_id for e in listed]
            if after not in ids:
                raise MalformedRequest(problems={"startKey": "is not a lastKey of these credentials"})
            start = ids.index(after) + 1
        items = listed[start : start + limit]
        more = len(listed) > start + limit
        return EnrollmentPage(items=items, last_position=items[-1].service_id if more else None)

    def active_segment_page(
        self, segment: int, total_segments: int, position: str | None, page_size: int = 100
    ) -> tuple[list[Enrollment], str | None]:
        """Segments by a stable hash of the key, as DynamoDB's; positions are offsets in the segment
        of the items examined (active or not), as a scan's Limit counts them."""
        keys = sorted(k for k in self.items if zlib.crc32("#".join(k).encode()) % total_segments == segment)
        start = int(position) if position else 0
        examined = keys[start : start + page_size]
        page = [replace(self.items[k], pii=None) for k in examined if self.items[k].active]
        after = start + len(examined)
        return page, str(after) if after < len(keys) else None

    def approximate_count(self) -> int:
        return len(self.items)


# --- change-event webhooks ----------------------------------------------------------------------

from phoneid.domain.monitor import MonitorState  # noqa: E402 - this section is appended
from phoneid.domain.monitor_pass import MonitorPass, SegmentProgress  # noqa: E402


class InMemoryMonitorStates:
    """Monitor states on the identities of ``enrollments``: saved only while the identity is active."""

    def __init__(self, enrollments: InMemoryEnrollmentStore) -> None:
        self.enrollments = enrollments
        self.items: dict[tuple[str, str], MonitorState] = {}

    def monitor_state(self, client_id: str, service_id: str) -> MonitorState | None:
        return self.items.get((client_id, service_id))

    def save_monitor_state(self, client_id: str, service_id: str, state: MonitorState) -> bool:
        found = self.enrollments.get(client_id, service_id)
        if found is None or not found.active:
            return False
        self.items[(client_id, service_id)] = state
        return True


class InMemoryMonitorPasses:
    """Monitor passes and their segments' progress, as the DynamoDB adapter keeps them."""

    def __init__(self) -> None:
        self.passes: dict[str, MonitorPass] = {}
        self.progresses: dict[tuple[str, int], SegmentProgress] = {}
        self.latest_id: str | None = None

    def plan(self, planned: MonitorPass) -> MonitorPass:
        if planned.pass_id in self.passes:
            return self.passes[planned.pass_id]
        self.passes[planned.pass_id] = planned
        self.latest_id = planned.pass_id
        return planned

    def get(self, pass_id: str) -> MonitorPass | None:
        return self.passes.get(pass_id)

    def latest(self) -> MonitorPass | None:
        return self.passes[self.latest_id] if self.latest_id else None

    def progress(self, pass_id: str, segment: int) -> SegmentProgress | None:
        return self.progresses.get((pass_id, segment))

    def save_progress(self, pass_id: str, progress: SegmentProgress, now: datetime) -> None:
        self.progresses[(pass_id, progress.segment)] = progress

    def segments(self, pass_id: str) -> list[SegmentProgress]:
        return [p for (pid, _), p in sorted(self.progresses.items()) if pid == pass_id]

    def save_totals(self, summary: MonitorPass) -> None:
        self.passes[summary.pass_id] = summary


class InMemoryWebhookQueue:
    """Queued events, and the retries asked for: (receipt, seconds)."""

    def __init__(self) -> None:
        self.sent: list[ChangeEvent] = []
        self.retries: list[tuple[str, int]] = []

    def send(self, event: ChangeEvent) -> None:
        self.sent.append(event)

    def retry_later(self, receipt: str, seconds: int) -> None:
        self.retries.append((receipt, seconds))


class RecordingWebhookSender:
    """Answers ``status`` (or raises ``failure``) and keeps every POST: (url, body, headers)."""

    def __init__(self, status: int = 200, failure: Exception | None = None) -> None:
        self.status = status
        self.failure = failure
        self.posts: list[tuple[str, bytes, dict[str, str]]] = []

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        self.posts.append((url, body, dict(headers)))
        if self.failure is not None:
            raise self.failure
        return self.status


class FakeSocket:
    """What ``http.client`` asks of a socket besides sending and receiving: a subclass gives
    ``sendall``, ``recv_into``, ``settimeout`` and ``close``, and the response is read through the
    standard library's own ``SocketIO`` over it (no file descriptor behind it)."""

    def makefile(self, mode: str = "rb", *_: Any, **__: Any) -> io.BufferedReader:
        return io.BufferedReader(socket.SocketIO(self, mode))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:
        return

    def fileno(self) -> int:
        return -1


# --- Connect ---------------------------------------------------------------------------------------


class InMemoryObjectStore:
    """The Connect bucket as bytes per key. Reads decode as the S3 adapter does (UTF-8, strict, a BOM
    dropped, line ends kept); writers make the object appear when closed. ``writes`` logs every key
    written, in order."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.writes: list[str] = []
        self._lock = threading.Lock()

    def put_bytes(self, key: str, data: bytes) -> None:
        with self._lock:
            self.objects[key] = data

    def text(self, key: str) -> str:
        return self.objects[key].decode("utf-8")

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(key for key in self.objects if key.startswith(prefix))

    def iter_lines(self, key: str, version_id: str | None = None) -> Iterator[str]:
        """The latest version whatever ``version_id`` says: the fake keeps one version a key."""
        data = self.objects.get(key)
        if data is None:
            raise KeyError(key)
        yield from io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")

    def iter_text(self, key: str, version_id: str | None = None) -> Iterator[str]:
        """The text in pieces of 64 KiB at most, as the S3 adapter reads it."""
        data = self.objects.get(key)
        if data is None:
            raise KeyError(key)
        reader = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
        while piece := reader.read(64 * 1024):
            yield piece

    def get_text(self, key: str) -> str:
        return self.objects[key].decode("utf-8-sig")

    def put_text(self, key: str, text: str) -> None:
        with self._lock:
            self.objects[key] = text.encode()
            self.writes.append(key)

    def open_writer(self, key: str) -> InMemoryTextSink:
        return InMemoryTextSink(self, key)

    def exists(self, key: str) -> bool:
        return key in self.objects

    def delete_prefix(self, prefix: str) -> int:
        with self._lock:
            doomed = [key for key in self.objects if key.startswith(prefix)]
            for key in doomed:
                del self.objects[key]
            return len(doomed)


class InMemoryTextSink:
    def __init__(self, store: InMemoryObjectStore, key: str) -> None:
        self._store = store
        self._key = key
        self._parts: list[str] = []
        self.closed = False

    def write(self, text: str) -> None:
        assert not self.closed
        self._parts.append(text)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._store.put_text(self._key, "".join(self._parts))


class InMemoryBatchStates:
    """Conditional like the DynamoDB adapter: a claim creates only, an update needs the state read."""

    def __init__(self) -> None:
        self.items: dict[str, Batch] = {}
        self._lock = threading.Lock()

    def claim(self, batch: Batch) -> bool:
        with self._lock:
            if batch.batch_id in self.items:
                return False
            self.items[batch.batch_id] = batch
            return True

    def update(self, batch: Batch, expected: BatchState) -> bool:
        with self._lock:
            current = self.items.get(batch.batch_id)
            if current is None or current.state != expected:
                return False
            self.items[batch.batch_id] = batch
            return True

    def get(self, batch_id: str) -> Batch | None:
        return self.items.get(batch_id)

    def list_recent(self, client_name: str | None = None, limit: int = 20) -> list[Batch]:
        batches = [b for b in self.items.values() if client_name is None or b.client_name == client_name]
        return sorted(batches, key=lambda b: b.created_at, reverse=True)[:limit]


class RecordingMailer:
    """Keeps every email: (to, subject, text)."""

    def __init__(self) -> None:
        self.sent: list[tuple[list[str], str, str]] = []

    def send(self, to: Sequence[str], subject: str, text: str) -> None:
        self.sent.append((list(to), subject, text))


class InMemoryConnectProfiles:
    def __init__(self) -> None:
        self.items: dict[str, ConnectProfile] = {}

    def get_by_name(self, client_name: str) -> ConnectProfile | None:
        return next((p for p in self.items.values() if p.client_name == client_name), None)

    def get_by_client(self, client_id: str) -> ConnectProfile | None:
        return self.items.get(client_id)

    def put(self, profile: ConnectProfile) -> None:
        taken = self.get_by_name(profile.client_name)
        if taken is not None and taken.client_id != profile.client_id:
            raise ValueError(f"client name {profile.client_name!r} is taken")
        self.items[profile.client_id] = profile

    def delete(self, client_id: str) -> bool:
        return self.items.pop(client_id, None) is not None


def enrolled_by_verify(
    manager: IdentityManager, caller: Caller, phone: str, customer: str | None
) -> Enrolled:
    """What a passing verification enrolls: the number and the client's customer id, no PII."""
    [outcome] = manager.enroll_many(caller, [Enrollee(phone, customer, Pii())])
    assert isinstance(outcome, Enrolled), outcome
    return outcome


class InMemoryIdempotencyStore:
    """Conditional like the DynamoDB adapter: a claim takes a key with no record, an expired one or
    an abandoned one; only the owner completes or releases."""

    def __init__(self) -> None:
        self.items: dict[str, KeyRecord] = {}
        self._lock = threading.Lock()

    def claim(self, record: KeyRecord, now: datetime) -> KeyRecord | None:
        with self._lock:
            holder = self.items.get(record.record_id)
            if holder is not None and not holder.claimable(now):
                return holder
            self.items[record.record_id] = record
            return None

    def complete(self, record: KeyRecord, response: bytes) -> bool:
        with self._lock:
            holder = self.items.get(record.record_id)
            if holder is None or holder.owner != record.owner:
                return False
            self.items[record.record_id] = replace(holder, status=RecordStatus.COMPLETED, response=response)
            return True

    def release(self, record: KeyRecord) -> None:
        with self._lock:
            holder = self.items.get(record.record_id)
            if holder is not None and holder.owner == record.owner:
                del self.items[record.record_id]


# --- push before poll -------------------------------------------------------------------------------


class InMemoryPushSubscriptions:
    """The push subscriptions table's rules: by selector (ended kept), by identity (not ended), and
    notification claims that expire after ``memory``."""

    def __init__(self, memory: timedelta = timedelta(days=7)) -> None:
        self.by_token: dict[str, PushSubscription] = {}
        self.claims: dict[str, datetime] = {}  # key -> when the claim expires
        self.memory = memory

    def put(self, subscription: PushSubscription) -> None:
        self.by_token[subscription.selector] = subscription

    def by_selector(self, selector: str) -> PushSubscription | None:
        return self.by_token.get(selector)

    def for_identity(self, client_id: str, service_id: str) -> list[PushSubscription]:
        latest: dict[PushSignal, PushSubscription] = {}
        for s in self.by_token.values():
            if (s.client_id, s.service_id) == (client_id, service_id) and not s.ended:
                latest[s.signal] = s
        return list(latest.values())

    def end(self, subscription: PushSubscription, now: datetime) -> None:
        self.by_token[subscription.selector] = replace(subscription, ended=True)

    def claim_event(self, key: str, now: datetime) -> bool:
        if key in self.claims and self.claims[key] > now:
            return False
        self.claims[key] = now + self.memory
        return True

    def release_event(self, key: str) -> None:
        self.claims.pop(key, None)


class InMemoryDecisionStore:
    """DecisionStore: the records by (client, id), counted once as DynamoDecisionStore counts them."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], DecisionRecord] = {}
        self.tallies: dict[tuple[str, date], dict[str, int]] = {}
        self._counted: set[tuple[str, str]] = set()

    def add(self, records: Sequence[DecisionRecord], *, once: str | None = None) -> bool:
        client_id = records[0].client_id
        key = (client_id, once if once is not None else records[0].id)
        new = key not in self._counted and (
            once is not None or (client_id, records[0].id) not in self.records
        )
        for record in records:
            self.records[(record.client_id, record.id)] = record
        if not new:
            return False
        self._counted.add(key)
        for day, counts in added(records).items():
            tally = self.tallies.setdefault((client_id, day), {})
            for name, count in counts.items():
                tally[name] = tally.get(name, 0) + count
        return True

    def get(self, client_id: str, decision_id: str) -> DecisionRecord | None:
        return self.records.get((client_id, decision_id))

    def page(self, client_id: str, query: DecisionQuery, *, limit: int, after: str | None) -> DecisionPage:
        found = sorted(
            (
                r
                for (owner, _), r in self.records.items()
                if owner == client_id
                and query.since <= r.ended_at < query.until
                and (query.number_mac is None or (r.number is not None and r.number.mac == query.number_mac))
                and (query.kind is None or r.kind == query.kind)
                and (query.outcome is None or r.outcome == query.outcome)
                and (query.reason is None or query.reason in r.reasons)
                and (query.request_mac is None or r.request_mac == query.request_mac)
            ),
            key=lambda r: (r.ended_at, r.id),
            reverse=True,
        )
        start = int(after) if after else 0
        items = tuple(found[start : start + limit])
        return DecisionPage(items, str(start + limit) if start + limit < len(found) else None)

    def days(self, client_id: str, first: date, last: date) -> dict[date, dict[str, int]]:
        return {
            day: dict(t)
            for (owner, day), t in self.tallies.items()
            if owner == client_id and first <= day <= last
        }

    def erase(self, client_id: str, number_mac: str) -> int:
        erased = [
            r
            for (owner, _), r in self.records.items()
            if owner == client_id and r.number and r.number.mac == number_mac
        ]
        for record in erased:
            del self.records[(client_id, record.id)]
        for day, counts in added(erased).items():
            tally = self.tallies.setdefault((client_id, day), {})
            for name, count in counts.items():
                tally[name] = tally.get(name, 0) - count
        return len(erased)
