"""Connect batches end to end on in-memory ports: validate, verify each chunk, deliver."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import pytest
from botocore.exceptions import ClientError

from phoneid.adapters.aws import internal_error
from phoneid.domain.clients import Caller, Client, Solution
from phoneid.domain.connect import (
    BatchCountMismatch,
    BatchState,
    ChunkThrottled,
    ConnectProfile,
    batch_id_of,
    chunk_key,
    result_key,
)
from phoneid.domain.connect.rejection import Rejection
from phoneid.domain.connect.writer import OUTPUT_COLUMNS
from phoneid.domain.credentials import hash_secret
from phoneid.domain.errors import InternalError, PhoneIdError, UnauthorizedForCountry
from phoneid.domain.evaluation import Assurance, Category, Evaluation, default_policy
from phoneid.domain.verification import Label, VerificationType, VerifyItem
from phoneid.services.connect import ConnectBatches
from phoneid.services.decision_log import DecisionLog
from phoneid.services.verify import Verified
from tests.fakes import (
    START,
    FakeClock,
    InMemoryBatchStates,
    InMemoryClientStore,
    InMemoryConnectProfiles,
    InMemoryDecisionStore,
    InMemoryObjectStore,
    RecordingMailer,
)
from tests.unit.helpers import LocalMac

ENROLL_KEY = "acme-enroll-key-7f3a"
OTHER_KEY = "globex-enroll-key-0000"
FILE = "acme_US_verifiedUser_20261122120000.csv"
ACME_EMAILS = ("ops@acme.example",)
OPERATOR = ("operator@phoneid.example",)


@cache
def key_hash(key: str) -> str:
    return hash_secret(key)


# --- a scripted verification ----------------------------------------------------------------------


@dataclass
class ScriptedVerify:
    """Stands in for ``VerifyService.verify_many``: every number passes and is enrolled, unless told."""

    fails: dict[str, tuple[int, ...]] = field(default_factory=dict)
    errors: dict[str, PhoneIdError] = field(default_factory=dict)
    throttled: set[str] = field(default_factory=set)
    calls: list[tuple[Caller, VerifyItem]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, caller: Caller, items: Sequence[VerifyItem]) -> list[Verified | PhoneIdError]:
        return [self._one(caller, item) for item in items]

    def _one(self, caller: Caller, item: VerifyItem) -> Verified | PhoneIdError:
        with self.lock:
            self.calls.append((caller, item))
        phone = item.phone_number
        if phone in self.throttled:
            try:
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "Query")
            except ClientError as error:
                throttled = internal_error("Query", error)  # as the adapters translate it
                throttled.__cause__ = error
                return throttled
        if phone in self.errors:
            return self.errors[phone]
        codes = self.fails.get(phone, ())
        success = not codes
        return Verified(
            item=item,
            phone_number=phone,
            success=success,
            label=Label.VERIFIED if success else Label.NOT_VERIFIED,
            evaluation=Evaluation({Category.AUTHENTICATION: codes, Category.RISK: ()}),
            assurance=Assurance("AL-3" if success else "AL-1", ("CE",) if success else ()),
            identity=None,
            service_id=f"svc{phone}" if success else None,
            phone_alias=f"ALIAS{phone[-4:]}",
            businesses=(),
            po_boxes=False,
            observations={},
            policy=default_policy(),
            country="US",
        )


# --- the world ------------------------------------------------------------------------------------


@dataclass
class World:
    service: ConnectBatches
    objects: InMemoryObjectStore
    states: InMemoryBatchStates
    profiles: InMemoryConnectProfiles
    mailer: RecordingMailer
    clients: InMemoryClientStore
    verify: ScriptedVerify
    clock: FakeClock

    def upload(self, text: str | bytes, file: str = FILE, client: str = "acme") -> str:
        key = f"clients/{client}/upload/{file}"
        self.objects.put_bytes(key, text.encode() if isinstance(text, str) else text)
        return key

    def validate(self, key: str, version: str = "v1") -> dict[str, Any]:
        return self.service.validate.run("connect-bucket", key, version_id=version, etag='"etag"').to_json()

    def verify_all(
        self, accepted: dict[str, Any], skip: frozenset[int] = frozenset()
    ) -> list[dict[str, Any]]:
        """What the Distributed Map does: one task per manifest item."""
        manifest = json.loads(self.objects.get_text(accepted["manifestKey"]))
        return [
            self.service.verify_chunk.run(item["batchId"], item["chunk"], item["key"]).to_json()
            for item in manifest
            if item["chunk"] not in skip
        ]

    def run(self, text: str | bytes, file: str = FILE) -> tuple[dict[str, Any], dict[str, Any]]:
        accepted = self.validate(self.upload(text, file))
        assert accepted["outcome"] == "accepted", accepted
        self.verify_all(accepted)
        return accepted, self.service.deliver.run(accepted["batchId"]).to_json()

    def csv_rows(self, key: str) -> list[list[str]]:
        return list(csv.reader(io.StringIO(self.objects.text(key), newline="")))


def make_world(
    *,
    types: tuple[str, ...] = ("verifiedUser",),
    emails: tuple[str, ...] = ACME_EMAILS,
    chunk_rows: int = 1000,
) -> World:
    objects, states, profiles = InMemoryObjectStore(), InMemoryBatchStates(), InMemoryConnectProfiles()
    mailer, clients, verify, clock = RecordingMailer(), InMemoryClientStore(), ScriptedVerify(), FakeClock()
    for client_id, name, key in (("client-acme", "acme", ENROLL_KEY), ("client-globex", "globex", OTHER_KEY)):
        clients.put(
            Client(
                client_id=client_id,
                tier="sandbox",
                region="US",
                solution=Solution.VERIFIED_USER,
                secret_hash="unused",
                created_at=START,
                name=name,
            )
        )
        profiles.put(
            ConnectProfile(
                client_id=client_id,
                client_name=name,
                types=frozenset(types),
                enroll_key_hash=key_hash(key),
                emails=emails if name == "acme" else (f"ops@{name}.example",),
            )
        )
    service = ConnectBatches(
        objects,
        states,
        profiles,
        mailer,
        clients,
        verify,
        DecisionLog(InMemoryDecisionStore(), LocalMac(), tier="sandbox", region="US"),
        clock,
        "US",
        chunk_rows=chunk_rows,
        operator_emails=OPERATOR,
    )
    return World(service, objects, states, profiles, mailer, clients, verify, clock)


def batch_file(
    *details: str, key: str = ENROLL_KEY, kind: str = "verifiedUser", count: int | None = None
) -> str:
    trailer = len(details) if count is None else count
    return "\n".join([f"H,{key},{kind}", *details, f"T,{trailer}"]) + "\n"


def assert_accounted(world: World, delivered: dict[str, Any]) -> tuple[list[list[str]], list[list[str]]]:
    """Every detail row read is in exactly one of the two files, and the trailers say so."""
    output = world.csv_rows(delivered["output"])
    errors = world.csv_rows(delivered["errors"])
    assert output[0] == ["H"]
    assert errors[0] == ["H", "verifiedUser"]
    assert output[-1] == ["T", str(len(output) - 2)]
    assert errors[-1] == ["T", str(len(errors) - 2)]
    assert len(output) - 2 + len(errors) - 2 == delivered["stats"]["rowsRead"]
    return output[1:-1], errors[1:-1]


# --- a mixed file ---------------------------------------------------------------------------------


def test_a_mixed_file_is_verified_delivered_and_counted() -> None:
    # Given a file with passing, failing, refused, partner, invalid and duplicate rows
    world = make_world()
    world.verify.fails["+12025550102"] = (9135, 9137)
    world.verify.errors["+12025550103"] = UnauthorizedForCountry("Unauthorized for country: not allowed")
    text = batch_file(
        "D,+12025550101,Noor,Haddad,cust-1",  # 2: passes
        "D,+12025550102,Ada,Lovelace",  # 3: does not pass
        "D,+12025550103,Alan,Turing",  # 4: verification refused (8010)
        "D,+12025550104,Grace,Hopper,cust-4,loyalty,issuer-9,L-1",  # 5: partner row, passes
        "D,,Mary,Shelley",  # 6: ERR_MISSING_PHONE
        "D,+12025550106,,Shelley",  # 7: ERR_MISSING_FNAME
        "D,+12025550107,Mary,",  # 8: ERR_MISSING_LNAME
        "D,12025550108,Mary,Shelley",  # 9: ERR_FORMAT_PHONE
        "D,+61412345678,Mary,Shelley",  # 10: ERR_PHONE_COUNTRY_NOTSUPPORTED
        "D,+12025550110,Mary,Shelley,cust-10,loyalty",  # 11: ERR_MISSING_ATTRIBUTE
        "D,+12025550101,NOOR,Haddad",  # 12: duplicate of line 2 by number and names
        "D,+12025550112,Other,Person,cust-1",  # 13: duplicate of line 2 by customer id
        "D,+12025550113,Last,Row",  # 14: passes
    )

    # When the batch runs through all three steps
    accepted, delivered = world.run(text)

    # Then every row is in exactly one file, in input order, with its outcome
    assert accepted["chunks"] == 1
    assert delivered["state"] == "delivered"
    assert delivered["output"] == "clients/acme/download/acme_US_verifiedUser_20261122120000_output.csv"
    assert delivered["errors"] == "clients/acme/download/acme_US_verifiedUser_20261122120000_errors.csv"
    output, errors = assert_accounted(world, delivered)
    assert [r[1] for r in output] == [
        "+12025550101",
        "+12025550102",
        "+12025550103",
        "+12025550104",
        "+12025550113",
    ]
    first = dict(zip(OUTPUT_COLUMNS, output[0], strict=True))
    assert first["Assurance Level"] == "AL-3"
    assert first["ServiceID"] == "svc+12025550101"
    assert first["GFP Authentication Result"] == "pass"
    assert first["Client Customer ID"] == "cust-1"
    failing = dict(zip(OUTPUT_COLUMNS, output[1], strict=True))
    assert failing["GFP Authentication Result"] == "fail:9135;9137"
    assert failing["ServiceID"] == ""
    refused = dict(zip(OUTPUT_COLUMNS, output[2], strict=True))
    assert (refused["Error"], refused["Error Message"]) == ("8010", "Unauthorized for country: not allowed")
    assert refused["Assurance Level"] == ""
    partner = dict(zip(OUTPUT_COLUMNS, output[3], strict=True))
    assert (partner["Attribute Type"], partner["Issuer ID"], partner["Attribute Value"]) == (
        "loyalty",
        "issuer-9",
        "L-1",
    )
    assert [(r[1], r[5]) for r in errors] == [
        ("", "ERR_MISSING_PHONE"),
        ("+12025550106", "ERR_MISSING_FNAME"),
        ("+12025550107", "ERR_MISSING_LNAME"),
        ("12025550108", "ERR_FORMAT_PHONE"),
        ("+61412345678", "ERR_PHONE_COUNTRY_NOTSUPPORTED"),
        ("+12025550110", "ERR_MISSING_ATTRIBUTE"),
        ("+12025550101", "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"),
        ("+12025550112", "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"),
    ]
    assert errors[-1][2:5] == ["Other", "Person", "cust-1"]

    # And the statistics add up
    stats = delivered["stats"]
    assert stats["rowsRead"] == 13
    assert stats["valid"] == 5
    assert stats["rejected"] == 8
    assert stats["duplicates"] == 2
    assert stats["verified"] == 3
    assert stats["notVerified"] == 1
    assert stats["enrolled"] == 3
    assert stats["failedByReason"] == {"9135": 1, "9137": 1}
    assert stats["errorsByCode"] == {"8010": 1}
    assert stats["processingFailed"] == 0

    # And the client is told, the state says delivered, the work objects are gone
    [(to, subject, body)] = world.mailer.sent
    assert to == list(ACME_EMAILS)
    assert subject == f"PhoneID Connect: {FILE} processed"
    assert "Rows read: 13" in body
    assert "Duplicates: 2" in body
    assert "/download/acme_US_verifiedUser_20261122120000_output.csv" in body
    assert "Noor" not in body
    batch = world.states.get(accepted["batchId"])
    assert batch is not None
    assert batch.state == BatchState.DELIVERED
    assert world.objects.keys("work/") == []


def test_each_row_is_verified_as_the_client_with_the_batch_type() -> None:
    # Given a humanAssurance file with a partner row
    world = make_world(types=("verifiedUser", "humanAssurance"))
    text = batch_file("D,+12025550101,Noor,Haddad,cust-1,loyalty,issuer-9,L-1", kind="humanAssurance")

    # When it runs
    world.run(text, file="acme_US_humanAssurance_20261122120000.csv")

    # Then the verification got the client's caller and the row as a VerifyItem
    [(caller, item)] = world.verify.calls
    assert caller.client_id == "client-acme"
    assert item == VerifyItem(
        phone_number="+12025550101",
        verification_type=VerificationType.HUMAN_ASSURANCE,
        first_name="Noor",
        last_name="Haddad",
        client_customer_id="cust-1",
        attributes=(("loyalty", "L-1"),),
    )


def test_bom_and_crlf_files_run_like_any_other() -> None:
    # Given a file saved by a spreadsheet: a BOM and CRLF line ends
    world = make_world()
    text = "\ufeff" + batch_file("D,+12025550101,Noor,Haddad", "D,+12025550102,Ada,Lovelace").replace(
        "\n", "\r\n"
    )

    # When it runs
    _, delivered = world.run(text.encode("utf-8"))

    # Then both rows are verified
    output, errors = assert_accounted(world, delivered)
    assert [r[1:4] for r in output] == [
        ["+12025550101", "Noor", "Haddad"],
        ["+12025550102", "Ada", "Lovelace"],
    ]
    assert errors == []


def test_formulas_in_the_input_are_neutralised_in_both_files() -> None:
    # Given names that a spreadsheet would run as formulas
    world = make_world()
    text = batch_file(
        'D,+12025550101,"=HYPERLINK(""http://evil.example"",""x"")",Haddad,@cust',
        "D,+12025550102,+SUM(1),-cmd|' /C calc'!A0",
        "D,,=1+1,Shelley",
    )

    # When it runs
    _, delivered = world.run(text)

    # Then every such cell starts with an apostrophe; the phone numbers are left alone
    output, errors = assert_accounted(world, delivered)
    assert output[0][1:5] == ["+12025550101", '\'=HYPERLINK("http://evil.example","x")', "Haddad", "'@cust"]
    assert output[1][1:4] == ["+12025550102", "'+SUM(1)", "'-cmd|' /C calc'!A0"]
    assert errors[0][1:4] == ["", "'=1+1", "Shelley"]


# --- bad files ------------------------------------------------------------------------------------

BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xfd" * 20


@pytest.mark.parametrize(
    ("file", "content", "reason"),
    [
        (FILE, batch_file("D,+12025550101,Noor,Haddad", key="not-the-key"), Rejection.ENROLL_KEY_INVALID),
        (FILE, batch_file("D,+12025550101,Noor,Haddad", key=OTHER_KEY), Rejection.ENROLL_KEY_INVALID),
        (
            "globex_US_verifiedUser_20261122120000.csv",
            batch_file("D,+12025550101,Noor,Haddad", key=OTHER_KEY),
            Rejection.CLIENT_MISMATCH,
        ),
        ("acme_US_verifiedUser.csv", batch_file("D,+12025550101,Noor,Haddad"), Rejection.FILE_NAME_INVALID),
        ("customers.csv", batch_file("D,+12025550101,Noor,Haddad"), Rejection.FILE_NAME_INVALID),
        (
            "acme_US_humanAssurance_20261122120000.csv",
            batch_file("D,+12025550101,Noor,Haddad", kind="humanAssurance"),
            Rejection.TYPE_NOT_ALLOWED,
        ),
        (FILE, "D,+12025550101,Noor,Haddad\nT,1\n", Rejection.HEADER_MISSING),
        (FILE, f"H,{ENROLL_KEY},verifiedUser\nD,+12025550101,Noor,Haddad\n", Rejection.TRAILER_MISSING),
        (FILE, batch_file("D,+12025550101,Noor,Haddad", count=2), Rejection.TRAILER_COUNT_MISMATCH),
        (FILE, batch_file("D,+12025550101,Noor,Haddad", count=0), Rejection.TRAILER_COUNT_MISMATCH),
        # a count past Python's 4,300-digit limit of int(): rejected as a count, not a failed batch
        (
            FILE,
            f"H,{ENROLL_KEY},verifiedUser\nD,+12025550101,Noor,Haddad\nT,{'9' * 5000}\n",
            Rejection.TRAILER_COUNT_MISMATCH,
        ),
        (FILE, batch_file("D,+12025550101,Noor,Haddad", kind="humanAssurance"), Rejection.TYPE_MISMATCH),
        (FILE, BINARY, Rejection.CONTENT_UNREADABLE),
        (FILE, "Dear team,\nplease find our customers attached.\n", Rejection.NOT_CSV),
        (FILE, b"", Rejection.FILE_EMPTY),
        (FILE, f"H,{ENROLL_KEY},verifiedUser\n", Rejection.NO_DETAIL_ROWS),
        (FILE, f"H,{ENROLL_KEY},verifiedUser\r\nT,0\r\n", Rejection.NO_DETAIL_ROWS),
    ],
)
def test_each_bad_file_is_rejected_explained_and_emailed(
    file: str, content: str | bytes, reason: Rejection
) -> None:
    # Given a bad file in acme's upload directory
    world = make_world()
    key = world.upload(content, file)

    # When validated
    result = world.validate(key)

    # Then the whole file is rejected, explained beside the downloads, and acme is told why
    assert result == {"batchId": batch_id_of(key, "v1"), "outcome": "rejected", "reason": reason.value}
    stem = file.removesuffix(".csv")
    explained = world.csv_rows(f"clients/acme/download/{stem}_rejected.csv")
    assert ["Reason Code", reason.value] in explained
    [(to, subject, body)] = world.mailer.sent
    assert to == list(ACME_EMAILS)
    assert subject == f"PhoneID Connect: {file} rejected ({reason.value})"
    assert reason.message in body
    assert ENROLL_KEY not in body
    batch = world.states.get(result["batchId"])
    assert batch is not None
    assert batch.state == BatchState.REJECTED
    assert batch.reason == reason.value
    assert world.objects.keys("work/") == []
    assert world.verify.calls == []


def test_a_file_rejected_late_leaves_no_chunks_behind() -> None:
    # Given 2,500 valid rows (three chunks written) and a trailer that is off by one
    world = make_world()
    details = [f"D,+1202555{n:04d},Given{n},Family{n}" for n in range(2500)]
    key = world.upload(batch_file(*details, count=2501))

    # When validated
    result = world.validate(key)

    # Then it is rejected and the chunks already written are gone
    assert result["outcome"] == "rejected"
    assert result["reason"] == "TRAILER_COUNT_MISMATCH"
    assert world.objects.keys("work/") == []
    assert any(written.startswith("work/") for written in world.objects.writes)


def test_a_file_under_an_unknown_client_prefix_is_rejected_to_the_operator() -> None:
    # Given a file in the upload directory of a name no client is onboarded under
    world = make_world()
    key = world.upload(
        batch_file("D,+12025550101,Noor,Haddad"), "initech_US_verifiedUser_20261122120000.csv", "initech"
    )

    # When validated
    result = world.validate(key)

    # Then it is rejected, nothing is written for a client, and the operator is told
    assert result["reason"] == Rejection.CLIENT_UNKNOWN.value
    assert world.objects.keys("clients/initech/download/") == []
    [(to, subject, body)] = world.mailer.sent
    assert to == list(OPERATOR)
    assert "CLIENT_UNKNOWN" in subject
    assert key in body


def test_a_file_of_a_disabled_client_is_rejected() -> None:
    # Given acme's API credentials were disabled after onboarding
    world = make_world()
    client = world.clients.get("client-acme")
    assert client is not None
    world.clients.put(replace(client, enabled=False))

    # When a file is validated
    result = world.validate(world.upload(batch_file("D,+12025550101,Noor,Haddad")))

    # Then it is rejected
    assert result["reason"] == Rejection.CLIENT_DISABLED.value


def test_a_rejected_client_without_addresses_gets_the_file_but_no_email() -> None:
    # Given acme gave no notification address
    world = make_world(emails=())

    # When a file with a wrong key is validated
    result = world.validate(world.upload(batch_file("D,+12025550101,Noor,Haddad", key="nope")))

    # Then it is rejected, explained in the download directory, and no one is emailed
    assert result["outcome"] == "rejected"
    assert world.objects.exists("clients/acme/download/acme_US_verifiedUser_20261122120000_rejected.csv")
    assert world.mailer.sent == []


# --- redelivery -----------------------------------------------------------------------------------


def test_a_second_validate_of_the_same_object_is_a_duplicate_and_writes_nothing() -> None:
    # Given a file validated once
    world = make_world()
    key = world.upload(batch_file("D,+12025550101,Noor,Haddad"))
    first = world.validate(key)
    objects, writes, states = (
        dict(world.objects.objects),
        list(world.objects.writes),
        dict(world.states.items),
    )

    # When the same object version is validated again (a redelivered event)
    second = world.validate(key)

    # Then it is a duplicate and nothing changed
    assert first["outcome"] == "accepted"
    assert second == {"batchId": first["batchId"], "outcome": "duplicate"}
    assert world.objects.objects == objects
    assert world.objects.writes == writes
    assert world.states.items == states
    assert world.mailer.sent == []


def test_a_duplicate_of_a_rejected_file_is_not_emailed_twice() -> None:
    # Given a rejected file
    world = make_world()
    key = world.upload(batch_file("D,+12025550101,Noor,Haddad", key="nope"))
    world.validate(key)

    # When its event is delivered again
    again = world.validate(key)

    # Then it is a duplicate and acme got one email
    assert again["outcome"] == "duplicate"
    assert len(world.mailer.sent) == 1


def test_a_new_version_of_the_same_file_is_a_new_batch() -> None:
    # Given a file validated once
    world = make_world()
    key = world.upload(batch_file("D,+12025550101,Noor,Haddad"))
    first = world.validate(key, version="v1")

    # When the client uploads the same name again (a new S3 version)
    second = world.validate(key, version="v2")

    # Then it is processed as a batch of its own
    assert second["outcome"] == "accepted"
    assert second["batchId"] != first["batchId"]


# --- chunks ---------------------------------------------------------------------------------------


def phone(n: int) -> str:
    """The n-th of 20,000 distinct valid US numbers."""
    return f"+1202{200 + n // 10_000}{n % 10_000:04d}"


def test_ten_thousand_and_one_rows_keep_input_order_across_chunks() -> None:
    # Given 10,001 valid rows, every 1,000th one invalid
    world = make_world()
    details = [
        f"D,{phone(n)},Given{n},Family{n},cust-{n}" if n % 1000 != 999 else f"D,{phone(n)},,Family{n}"
        for n in range(10_001)
    ]

    # When the batch runs, chunks verified in reverse order as a parallel map may finish them
    accepted = world.validate(world.upload(batch_file(*details)))
    manifest = json.loads(world.objects.get_text(accepted["manifestKey"]))
    for item in reversed(manifest):
        world.service.verify_chunk.run(item["batchId"], item["chunk"], item["key"]).to_json()
    delivered = world.service.deliver.run(accepted["batchId"]).to_json()

    # Then the output has the valid rows in input order, the error file the rest
    assert accepted["chunks"] == 10
    assert [item["chunk"] for item in manifest] == list(range(10))
    output, errors = assert_accounted(world, delivered)
    assert [r[4] for r in output] == [f"cust-{n}" for n in range(10_001) if n % 1000 != 999]
    assert [r[1] for r in errors] == [phone(n) for n in range(999, 10_001, 1000)]
    assert delivered["stats"]["rowsRead"] == 10_001
    assert delivered["stats"]["verified"] == 9_991


def test_chunks_are_written_while_the_file_is_still_being_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a file of 2,500 rows whose last line is watched
    world = make_world()
    key = world.upload(batch_file(*(f"D,+1202555{n:04d},G{n},F{n}" for n in range(2500))))
    batch_id = batch_id_of(key, "v1")
    seen_at_end: list[bool] = []
    reading = world.objects.iter_text

    versions: list[str | None] = []

    def watched(read_key: str, version_id: str | None = None) -> Iterator[str]:
        if read_key == key:
            versions.append(version_id)
        for piece in reading(read_key, version_id):
            for line in piece.splitlines(keepends=True):  # handed over a line at a time
                if read_key == key and line.startswith("T,"):
                    seen_at_end.append(world.objects.exists(chunk_key(batch_id, 1)))
                yield line

    monkeypatch.setattr(world.objects, "iter_text", watched)

    # When validated
    result = world.validate(key)

    # Then the version the event named was read, and the first chunks existed before the trailer
    # was read: the file is never held whole
    assert result["chunks"] == 3
    assert versions == ["v1"]
    assert seen_at_end == [True]
    lines = world.objects.text(chunk_key(batch_id, 0)).splitlines()
    assert len(lines) == 1000
    assert json.loads(lines[0]) == {"line": 2, "phone": "+12025550000", "firstName": "G0", "lastName": "F0"}


def test_verifying_a_chunk_twice_gives_the_same_results_object() -> None:
    # Given an accepted batch whose only chunk was verified
    world = make_world()
    accepted = world.validate(
        world.upload(batch_file("D,+12025550101,Noor,Haddad", "D,+12025550102,Ada,Lovelace"))
    )
    key = result_key(accepted["batchId"], 0)
    first = world.service.verify_chunk.run(
        accepted["batchId"], 0, chunk_key(accepted["batchId"], 0)
    ).to_json()
    stored = world.objects.objects[key]

    # When the task runs again for that chunk
    second = world.service.verify_chunk.run(
        accepted["batchId"], 0, chunk_key(accepted["batchId"], 0)
    ).to_json()

    # Then the result and its object are the same, and no row was verified twice
    assert first == second == {"chunk": 0, "rows": 2, "passed": 2}
    assert world.objects.objects[key] == stored
    assert len(world.verify.calls) == 2


def test_a_throttled_chunk_raises_chunk_throttled_and_succeeds_when_retried() -> None:
    # Given a chunk in which one number's verification is throttled upstream
    world = make_world()
    rows = [f"D,+1202555{n:04d},G{n},F{n}" for n in range(50)]
    accepted = world.validate(world.upload(batch_file(*rows)))
    batch_id, key = accepted["batchId"], chunk_key(accepted["batchId"], 0)
    world.verify.throttled.add("+12025550025")

    # When the chunk is verified
    with pytest.raises(ChunkThrottled) as caught:
        world.service.verify_chunk.run(batch_id, 0, key).to_json()

    # Then the error has the name the state machine retries on, and no results were written
    assert type(caught.value).__name__ == "ChunkThrottled"
    assert not world.objects.exists(result_key(batch_id, 0))

    # When the retry runs after the throttling passed
    world.verify.throttled.clear()
    summary = world.service.verify_chunk.run(batch_id, 0, key).to_json()

    # Then the chunk is complete
    assert summary == {"chunk": 0, "rows": 50, "passed": 50}


def test_an_error_that_is_not_throttling_stays_a_row_error() -> None:
    # Given a row whose verification fails with an internal error that is not throttling
    world = make_world()
    world.verify.errors["+12025550101"] = InternalError()

    # When the batch runs
    _, delivered = world.run(batch_file("D,+12025550101,Noor,Haddad"))

    # Then the row carries 8000 in the output file
    output, _ = assert_accounted(world, delivered)
    assert output[0][OUTPUT_COLUMNS.index("Error")] == "8000"


def test_rows_of_a_client_removed_after_validation_are_refused_in_the_output() -> None:
    # Given an accepted batch whose client is then disabled
    world = make_world()
    accepted = world.validate(world.upload(batch_file("D,+12025550101,Noor,Haddad")))
    client = world.clients.get("client-acme")
    assert client is not None
    world.clients.put(replace(client, enabled=False))

    # When its chunk is verified and delivered
    world.verify_all(accepted)
    delivered = world.service.deliver.run(accepted["batchId"]).to_json()

    # Then the row is refused (8002) without calling the verification
    output, _ = assert_accounted(world, delivered)
    assert output[0][OUTPUT_COLUMNS.index("Error")] == "8002"
    assert world.verify.calls == []


# --- deliver --------------------------------------------------------------------------------------


def test_a_chunk_without_results_ends_in_the_error_file_and_the_batch_fails() -> None:
    # Given 25 rows in chunks of 10, an invalid row in each chunk's range, and chunk 1 never verified
    world = make_world(chunk_rows=10)
    details = [f"D,+1202555{n:04d},G{n},F{n}" if n % 9 != 4 else f"D,bad{n},G{n},F{n}" for n in range(25)]
    accepted = world.validate(world.upload(batch_file(*details)))
    world.verify_all(accepted, skip=frozenset({1}))

    # When delivered
    delivered = world.service.deliver.run(accepted["batchId"]).to_json()

    # Then no row is lost: chunk 1's rows (lines 13-23) are ERR_PROCESSING_FAILED, merged in input order
    assert delivered["state"] == "failed"
    output, errors = assert_accounted(world, delivered)
    assert len(output) == 12
    assert [(r[1], r[5]) for r in errors] == [
        (f"bad{n}", "ERR_FORMAT_PHONE") if n % 9 == 4 else (f"+1202555{n:04d}", "ERR_PROCESSING_FAILED")
        for n in (4, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22)
    ]
    assert delivered["stats"]["processingFailed"] == 10

    # And the operator and the client are told; the state records why
    subjects = {subject: to for to, subject, _ in world.mailer.sent}
    assert subjects[f"PhoneID Connect: batch {accepted['batchId']} failed ({FILE})"] == list(OPERATOR)
    assert subjects[f"PhoneID Connect: {FILE} processed, 10 rows not processed"] == list(ACME_EMAILS)
    batch = world.states.get(accepted["batchId"])
    assert batch is not None
    assert batch.state == BatchState.FAILED
    assert batch.reason is not None
    assert "1 chunk(s) without results" in batch.reason


def test_counts_that_do_not_add_up_fail_the_batch_loudly() -> None:
    # Given a verified batch whose results object lost a row
    world = make_world()
    accepted = world.validate(
        world.upload(batch_file("D,+12025550101,Noor,Haddad", "D,+12025550102,Ada,Lovelace"))
    )
    world.verify_all(accepted)
    key = result_key(accepted["batchId"], 0)
    world.objects.put_text(key, world.objects.text(key).splitlines(keepends=True)[0])

    # When delivered
    with pytest.raises(BatchCountMismatch):
        world.service.deliver.run(accepted["batchId"]).to_json()

    # Then the batch failed, the operator was told, the client was not, and the work stays to look at
    batch = world.states.get(accepted["batchId"])
    assert batch is not None
    assert batch.state == BatchState.FAILED
    assert batch.reason is not None
    assert "count mismatch" in batch.reason
    [(to, subject, body)] = world.mailer.sent
    assert to == list(OPERATOR)
    assert "failed" in subject
    assert "count mismatch: 1 output rows + 0 error rows != 2 detail rows read" in body
    assert world.objects.keys(f"work/{accepted['batchId']}/") != []


def test_delivering_twice_returns_the_same_and_emails_once() -> None:
    # Given a delivered batch
    world = make_world()
    accepted, delivered = world.run(batch_file("D,+12025550101,Noor,Haddad"))

    # When deliver runs again (a retried task)
    again = world.service.deliver.run(accepted["batchId"]).to_json()

    # Then it answers as before and sends nothing more
    assert again == delivered
    assert len(world.mailer.sent) == 1


def test_a_file_of_only_invalid_rows_has_no_chunks_and_delivers_its_errors() -> None:
    # Given a file whose every row is invalid
    world = make_world()

    # When it runs
    accepted, delivered = world.run(batch_file("D,,Noor,Haddad", "D,+12025550102,,Lovelace"))

    # Then no chunk exists, the output is empty and the error file has both rows
    assert accepted["chunks"] == 0
    output, errors = assert_accounted(world, delivered)
    assert output == []
    assert [r[5] for r in errors] == ["ERR_MISSING_PHONE", "ERR_MISSING_FNAME"]
    assert delivered["state"] == "delivered"


def test_the_manifest_lists_every_chunk_for_the_map() -> None:
    # Given 2,001 valid rows
    world = make_world()
    accepted = world.validate(
        world.upload(batch_file(*(f"D,+1202555{n:04d},G{n},F{n}" for n in range(2001))))
    )

    # When the manifest is read as the Distributed Map's ItemReader reads it
    manifest = json.loads(world.objects.get_text(accepted["manifestKey"]))

    # Then it names each chunk object
    batch_id = accepted["batchId"]
    assert accepted["manifestKey"] == f"work/{batch_id}/manifest.json"
    assert manifest == [
        {"batchId": batch_id, "chunk": n, "key": f"work/{batch_id}/chunks/{n:05d}.jsonl"} for n in range(3)
    ]


def test_validation_that_breaks_off_fails_the_batch_and_tells_the_operator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a bucket that fails while the file is read
    world = make_world()
    key = world.upload(batch_file("D,+12025550101,Noor,Haddad"))

    def broken(read_key: str, version_id: str | None = None) -> Iterator[str]:
        raise InternalError("Internal error during S3 read; retry the request")
        yield ""  # pragma: no cover

    monkeypatch.setattr(world.objects, "iter_text", broken)

    # When validated
    with pytest.raises(InternalError):
        world.validate(key)

    # Then the batch is failed (not stuck in validating), the operator knows, and the client has
    # its rejected file and email, as for any failed step
    batch = world.states.get(batch_id_of(key, "v1"))
    assert batch is not None
    assert batch.state == BatchState.FAILED
    [(to, _, body), (client_to, subject, _)] = world.mailer.sent
    assert to == list(OPERATOR)
    assert "validation broke off: InternalError" in body
    assert client_to == list(ACME_EMAILS)
    assert subject == f"PhoneID Connect: {FILE} rejected (PROCESSING_FAILED)"


# --- a step that failed in any way ---------------------------------------------------------------------


def rejected_rows(world: World) -> dict[str, str]:
    stem = FILE.removesuffix(".csv")
    return dict(csv.reader(io.StringIO(world.objects.text(f"clients/acme/download/{stem}_rejected.csv"))))


def test_a_batch_whose_validation_was_killed_ends_failed_with_the_clients_file_and_the_emails() -> None:
    # Given a batch claimed by a validation that was killed mid-way (its work objects left behind)
    world = make_world()
    key = world.upload(batch_file("D,+12025550101,Noor,Haddad"))
    world.validate(key)
    batch_id = batch_id_of(key, "v1")
    stored = world.states.get(batch_id)
    assert stored is not None
    world.states.update(replace(stored, state=BatchState.VALIDATING), stored.state)
    world.objects.put_text(f"work/{batch_id}/chunks/000000.jsonl", "{}\n")
    world.mailer.sent.clear()

    # When the catch-all step runs for the upload, with the error Step Functions saw
    result = world.service.fail.run(key, version_id="v1", etag='"etag"', error="Sandbox.Timedout").to_json()

    # Then the batch is failed, the client has its rejected file and email, the operator an alert
    assert result == {"batchId": batch_id, "state": "failed", "changed": True}
    batch = world.states.get(batch_id)
    assert batch is not None
    assert batch.state == BatchState.FAILED
    assert batch.reason == "the workflow failed while the batch was validating: Sandbox.Timedout"
    assert rejected_rows(world)["Reason Code"] == "PROCESSING_FAILED"
    [(to, alert, body), (client_to, subject, text)] = world.mailer.sent
    assert (to, alert) == (list(OPERATOR), f"PhoneID Connect: batch {batch_id} failed ({FILE})")
    assert "Sandbox.Timedout" in body
    assert (client_to, subject) == (
        list(ACME_EMAILS),
        f"PhoneID Connect: {FILE} rejected (PROCESSING_FAILED)",
    )
    assert "could not be processed" in text
    assert world.objects.keys("work/") == []


def test_the_catch_all_is_idempotent_and_leaves_final_batches_alone() -> None:
    # Given a delivered batch, and a verifying batch failed once already
    world = make_world()
    delivered, _ = world.run(batch_file("D,+12025550101,Noor,Haddad"))
    other = world.upload(
        batch_file("D,+12025550101,Noor,Haddad"), file="acme_US_verifiedUser_20261122120001.csv"
    )
    accepted = world.validate(other)
    first = world.service.fail.run(other, version_id="v1", error="States.Timeout").to_json()
    world.mailer.sent.clear()

    # When the catch-all runs again for both (a retry, or the execution-status rule)
    again = world.service.fail.run(other, version_id="v1", error="States.Timeout").to_json()
    untouched = world.service.fail.run(
        world.upload(batch_file("D,+12025550101,Noor,Haddad")), version_id="v1"
    ).to_json()

    # Then nothing changes and nothing is sent
    assert (first["changed"], again["changed"]) == (True, False)
    assert again == {"batchId": accepted["batchId"], "state": "failed", "changed": False}
    assert untouched == {"batchId": delivered["batchId"], "state": "delivered", "changed": False}
    assert world.mailer.sent == []


def test_a_step_that_failed_before_claiming_its_batch_still_ends_one() -> None:
    # Given an upload whose validation never started (no batch record)
    world = make_world()
    key = world.upload(batch_file("D,+12025550101,Noor,Haddad"))

    # When the catch-all runs
    result = world.service.fail.run(key, version_id="v1", error="Lambda.Unknown").to_json()

    # Then a failed batch exists for the upload, and the client and operator are told
    batch = world.states.get(result["batchId"])
    assert batch is not None
    assert (batch.state, batch.client_name, batch.file_name) == (BatchState.FAILED, "acme", FILE)
    assert rejected_rows(world)["Reason Code"] == "PROCESSING_FAILED"
    assert len(world.mailer.sent) == 2
    # And a validation that starts late finds it claimed
    assert world.validate(key)["outcome"] == "duplicate"
