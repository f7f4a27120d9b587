"""A Connect file of N rows end to end on the local stack, against a floor measured in the same run.

Generates an N-row ``humanAssurance`` file for the Sandbox US stack, starts ``phoneid dev`` as a
subprocess on free ports (as tests/e2e/conftest.py does), creates a ``verified-user`` client and
onboards it (``phoneid clients create`` and ``phoneid connect onboard`` with ``--local``), then does
what ``phoneid connect submit FILE --local`` does: puts the file under the client's upload prefix and
waits for the batch's final state. Prints rows per second end to end; each step's time (from the
execution's history in moto's Step Functions) and peak RSS; and the floor: a plain ``csv`` +
``phonenumbers`` pass over the same file plus a bare DynamoDB ``BatchWriteItem`` of the run's own
enrollments (every item it made in the enrollments table, copied into a new table of the same moto),
and the ratio end to end / floor.

Before the measured run a 2,000-row file goes through, so that each step's worker processes are
started and warm, as in a stack in use (Lambda's warm execution environments).

Memory. ``phoneid dev`` runs each step's Lambda task in worker processes of its own
(``phoneid_dev.processes``, named by ``--function``), so a thread here reads each worker's ``VmHWM``
(/proc/PID/status): a step's peak RSS is its highest worker's. The server's own process (moto with
its storage, the Step Functions interpreter, the API) is sampled every 20 ms and printed apart.
With ``PHONEID_LAMBDA_PROCESSES=0`` the steps run in the server, and a step's peak is the server's
highest RSS while it ran: an upper bound that includes moto's storage.

The file's mix: one row per US test user with that user's own name; most rows a test user's number
with another, unique, name (Human Assurance does not decide by name, so these pass unless the user
scripts a fraud signal, and a passing row is enrolled: a new identity when it has a Client Customer
ID, the number's existing one otherwise; users of the ``identity`` solution give 8009); about 12 %
numbers that are no test user (valid, 8007); 2 % partner rows; 1.5 % of each row error code; 1.5 %
duplicates; Client Customer IDs on 60 % of the rows, unique per row. So about two rows in five make
a new identity: the workflow's heaviest part, its writes, is measured at a realistic share.

These are figures for comparing changes on one machine (moto instead of DynamoDB, S3 and Step
Functions, all of them in one process), not a prediction of the time in AWS.

    .venv/bin/python bench/connect.py [--rows N] [--keep]     # N defaults to 800,000
    .venv/bin/python bench/connect.py --profile [--rows N]    # cProfile of verify_chunk (20,000 rows)
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

# isort: split

from phoneid_dev.emulation import free_port

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

CLIENT = "bench"
KIND = "humanAssurance"  # a passing row is enrolled whatever its name: the most writes a file can ask
STEPS = ("Validate", "VerifyChunks", "Deliver")
# The function each step's Lambda task runs (its worker processes are named by it).
STEP_FUNCTIONS = {
    "Validate": "ConnectValidateFunction",
    "VerifyChunks": "ConnectVerifyChunkFunction",
    "Deliver": "ConnectDeliverFunction",
}
MB = 1024 * 1024

# --- the file -------------------------------------------------------------------------------------

_FIRST = [
    "Aaron",
    "Abigail",
    "Adam",
    "Adrian",
    "Aisha",
    "Alan",
    "Alice",
    "Amara",
    "Amir",
    "Ana",
    "Andre",
    "Angela",
    "Anton",
    "Arjun",
    "Astrid",
    "Aurora",
    "Ben",
    "Bianca",
    "Boris",
    "Bruno",
    "Caleb",
    "Camila",
    "Carla",
    "Carlos",
    "Cecile",
    "Chen",
    "Chiara",
    "Clara",
    "Colin",
    "Dana",
    "Daniel",
    "Dara",
    "David",
    "Dmitri",
    "Elena",
    "Eli",
    "Elif",
    "Emil",
    "Emma",
    "Eric",
    "Esme",
    "Ethan",
    "Eva",
    "Felix",
    "Fiona",
    "Frank",
    "Freya",
    "Gabriel",
    "Gemma",
    "George",
    "Gina",
    "Grace",
    "Hamid",
    "Hana",
    "Hannah",
    "Harper",
    "Hector",
    "Helen",
    "Henry",
    "Ibrahim",
    "Ida",
    "Igor",
    "Ilse",
    "Irene",
    "Isaac",
    "Isla",
    "Ivan",
    "Jack",
    "Jade",
    "Jakob",
    "James",
    "Jana",
    "Jasper",
    "Jin",
    "Joan",
    "Joel",
    "John",
    "Jonah",
    "Jorge",
    "Julia",
    "June",
    "Kai",
    "Kamal",
    "Kara",
    "Karim",
    "Kate",
    "Keira",
    "Kenji",
    "Kim",
    "Kofi",
    "Lars",
    "Laura",
    "Leah",
    "Leo",
    "Leon",
    "Lia",
    "Liam",
    "Lila",
    "Linus",
    "Lior",
    "Lucia",
    "Luis",
    "Luna",
    "Maja",
    "Malik",
    "Mara",
    "Marco",
    "Maria",
    "Mark",
    "Marta",
    "Mateo",
    "Maya",
    "Mei",
    "Mia",
    "Mika",
    "Milan",
    "Mira",
    "Nadia",
    "Naomi",
    "Nia",
    "Nico",
    "Nina",
    "Noah",
    "Nora",
    "Omar",
    "Oscar",
    "Owen",
    "Paola",
    "Paul",
    "Petra",
    "Quinn",
    "Rafael",
    "Rania",
    "Raul",
    "Ravi",
    "Rhea",
    "Rita",
    "Rosa",
    "Ruby",
    "Ruth",
    "Sam",
    "Sara",
    "Selin",
    "Seth",
    "Sina",
    "Sofia",
    "Soren",
    "Stella",
    "Tara",
    "Teo",
    "Thea",
    "Theo",
    "Tom",
    "Uma",
    "Vera",
    "Victor",
    "Viktor",
    "Wade",
    "Will",
    "Xavier",
    "Yara",
    "Yusuf",
    "Zara",
    "Zoe",
    "Zora",
    "Hugh",
    "Ines",
    "Jamal",
    "Ola",
    "Pia",
    "Remy",
    "Saul",
    "Tove",
    "Ugo",
    "Wren",
    "Yuki",
]
_LAST_ROOTS = [
    "Ash",
    "Bel",
    "Birch",
    "Black",
    "Bright",
    "Brook",
    "Cal",
    "Cold",
    "Corn",
    "Cross",
    "Dal",
    "Dun",
    "East",
    "Elm",
    "Fair",
    "Fen",
    "Fern",
    "Gold",
    "Gray",
    "Green",
    "Hal",
    "Hart",
    "Hazel",
    "High",
    "Holl",
    "Iron",
    "Kings",
    "Lang",
    "Lock",
    "Long",
    "Marsh",
    "Mill",
    "Moor",
    "North",
    "Oak",
    "Pen",
    "Red",
    "Ridge",
    "Rock",
    "Rose",
    "Rush",
    "Sand",
    "Silver",
    "Snow",
    "South",
    "Stan",
    "Stone",
    "Storm",
    "Sun",
    "Thorn",
    "Wal",
    "West",
    "White",
    "Wild",
    "Wind",
    "Win",
    "Wood",
    "Wright",
    "Yar",
    "Bram",
    "Crane",
    "Dray",
    "Fox",
    "Glen",
    "Hay",
    "Lark",
    "Mor",
    "Quill",
    "Rav",
    "Sel",
    "Tam",
    "Vail",
    "Wick",
]
_LAST_ENDS = [
    "wood",
    "ford",
    "field",
    "ton",
    "ley",
    "worth",
    "by",
    "more",
    "dale",
    "well",
    "brook",
    "stone",
    "wick",
    "man",
    "ridge",
    "hill",
    "side",
    "gate",
    "well",
    "ham",
    "shaw",
    "land",
    "mere",
    "burn",
    "combe",
    "cott",
    "den",
    "don",
    "hurst",
    "ington",
    "lake",
    "low",
    "mont",
    "ney",
    "ridge",
    "thorpe",
    "vale",
    "ward",
    "water",
    "win",
    "cliff",
    "croft",
    "ington",
    "ley",
    "bury",
    "borough",
    "dell",
    "fold",
    "garth",
    "holm",
    "ings",
    "kirk",
    "mouth",
    "ness",
    "port",
    "stead",
    "ster",
    "stow",
    "wade",
    "yard",
    "acre",
    "bank",
    "beck",
    "berry",
    "bourne",
    "bridge",
    "by",
    "caster",
    "church",
]
_AREA_CODES = (
    201,
    206,
    212,
    213,
    214,
    305,
    312,
    313,
    401,
    415,
    503,
    512,
    602,
    614,
    617,
    702,
    713,
    718,
    801,
    919,
)
_FOREIGN = ("+442079460958", "+4915123456789", "+33612345678", "+61491570149", "+34612345678")
_BAD_FORMAT = ("2025550123", "+1202555", "+12021234567", "+1 (999) 555-0100", "0044 20 7946 0958", "+abc")
_LONG = "X" * 129


@dataclass
class GeneratedFile:
    path: Path
    rows: int
    expected: Counter[str] = field(default_factory=Counter)


def _names() -> tuple[list[str], list[str]]:
    lasts = sorted({root + end for root in _LAST_ROOTS for end in _LAST_ENDS})
    return list(_FIRST), [last.capitalize() for last in lasts]


def generate(
    directory: Path,
    rows: int,
    enroll_key: str,
    seed: int = 20260301,
    stamp: str | None = None,
    customers: str = "C",
) -> GeneratedFile:
    """The file ``{CLIENT}_US_{KIND}_{stamp}.csv``: H, ``rows`` D records, T (CRLF)."""
    import phonenumbers

    from phoneid.domain.sandbox import Catalogue

    rng = random.Random(seed)
    users = list(Catalogue.load("US"))
    nanp = [u for u in users if u.phone_number.startswith("+1")]  # a US file's numbers
    served = [u for u in nanp if u.solution_name in ("any", "verified-user")]
    refused = [u for u in nanp if u not in served]  # identity solution: 8009 for this client
    firsts, lasts = _names()
    assert len(firsts) * len(lasts) >= rows, "too few names for unique names per row"

    def unique_name(i: int) -> tuple[str, str]:
        return firsts[i % len(firsts)], lasts[(i // len(firsts)) % len(lasts)]

    def nobody() -> str:
        while True:
            number = f"+1{rng.choice(_AREA_CODES)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
            if phonenumbers.is_valid_number(phonenumbers.parse(number)) and number[5:8] != "555":
                return number

    stamp = stamp or datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    path = directory / f"{CLIENT}_US_{KIND}_{stamp}.csv"
    generated = GeneratedFile(path, rows)
    expected = generated.expected
    kept: list[list[str]] = []  # earlier valid rows, for duplicates
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(["H", enroll_key, KIND])
        for i in range(rows):
            customer = f"{customers}{i:09d}" if rng.random() < 0.6 else ""
            first, last = unique_name(i)
            if i < len(users):  # each test user once, under their own name
                user = users[i]
                row = ["D", user.phone_number, user.identity.first_name, user.identity.last_name, customer]
                expected[
                    "own name"
                    if user in served
                    else "8009"
                    if user in refused
                    else "ERR_PHONE_COUNTRY_NOTSUPPORTED"
                ] += 1
                kept.append(row)
                writer.writerow(row)
                continue
            draw = rng.random() * 100
            if draw < 74:
                user = rng.choice(served) if rng.random() < 0.9 else rng.choice(refused)
                row = ["D", user.phone_number, first, last, customer]
                expected["test user, other name" if user in served else "8009"] += 1
            elif draw < 86:
                row = ["D", nobody(), first, last, customer]
                expected["8007"] += 1
            elif draw < 88:
                user = rng.choice(served)
                row = ["D", user.phone_number, first, last, customer, "loyaltyId", "issuer-7", f"L{i:08d}"]
                expected["partner row"] += 1
            elif draw < 98.5:
                code = int((draw - 88) // 1.5)
                phone = rng.choice(served).phone_number
                row = [
                    ["D", phone, "", last, customer],
                    ["D", phone, first, "", customer],
                    ["D", "", first, last, customer],
                    ["D", phone, _LONG, last, customer],
                    ["D", rng.choice(_BAD_FORMAT), first, last, customer],
                    ["D", rng.choice(_FOREIGN), first, last, customer],
                    ["D", phone, first, last, customer, "loyaltyId", "", ""],
                ][code]
                expected[
                    (
                        "ERR_MISSING_FNAME",
                        "ERR_MISSING_LNAME",
                        "ERR_MISSING_PHONE",
                        "ERR_FIELD_TOO_LONG",
                        "ERR_FORMAT_PHONE",
                        "ERR_PHONE_COUNTRY_NOTSUPPORTED",
                        "ERR_MISSING_ATTRIBUTE",
                    )[code]
                ] += 1
                writer.writerow(row)
                continue
            else:  # a duplicate: the same row again, or another row with an earlier Client Customer ID
                original = rng.choice(kept[-5000:])
                if original[4] and rng.random() < 0.5:
                    row = ["D", nobody(), first, last, original[4]]
                else:
                    row = list(original)
                expected["ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"] += 1
                writer.writerow(row)
                continue
            kept.append(row)
            if len(kept) > 10_000:
                del kept[:5000]
            writer.writerow(row)
        writer.writerow(["T", rows])
    return generated


# --- the dev server's memory ------------------------------------------------------------------------


class RssSampler(threading.Thread):
    """(time, VmRSS, VmHWM) of a process every ``interval`` seconds, in bytes; and the peak RSS
    (VmHWM) of each of its Lambda worker processes, by function."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, int, int]] = []
        self.workers: dict[int, tuple[str, int]] = {}  # pid -> (function, peak RSS)
        self._halt = threading.Event()

    @staticmethod
    def _status(pid: int) -> tuple[int, int]:
        rss = hwm = 0
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
        return rss, hwm

    def read(self) -> tuple[int, int]:
        return self._status(self.pid)

    def read_workers(self) -> None:
        """Each worker process of the server (``phoneid_dev.processes --function NAME``): its peak."""
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != self.pid:
                    continue
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if b"phoneid_dev.processes" not in argv:
                    continue
                function = argv[argv.index(b"--function") + 1].decode()
                _, hwm = self._status(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
            known = self.workers.get(int(entry.name), (function, 0))
            self.workers[int(entry.name)] = (function, max(known[1], hwm))

    def worker_peaks(self) -> dict[str, tuple[int, int]]:
        """Function -> (worker processes seen, the highest peak RSS among them)."""
        peaks: dict[str, tuple[int, int]] = {}
        for function, hwm in self.workers.values():
            count, peak = peaks.get(function, (0, 0))
            peaks[function] = (count + 1, max(peak, hwm))
        return peaks

    def run(self) -> None:
        ticks = 0
        while not self._halt.is_set():
            try:
                rss, hwm = self.read()
            except OSError:
                return
            self.samples.append((time.time(), rss, hwm))
            if ticks % 10 == 0:  # every 0.2 s: a worker's VmHWM keeps its peak between readings
                self.read_workers()
            ticks += 1
            time.sleep(self.interval)

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join()
        self.read_workers()

    def window(self, began: float, ended: float) -> tuple[int, int]:
        """(RSS when the window began, peak RSS within it)."""
        before = [s for s in self.samples if s[0] <= began]
        inside = [s for s in self.samples if began <= s[0] <= ended]
        start = (before[-1] if before else self.samples[0])[1]
        peak = max([s[1] for s in inside] or [start])
        if inside:
            hwm_before = (before[-1] if before else inside[0])[2]
            after = [s for s in self.samples if s[0] > ended]
            hwm_end = (after[0] if after else inside[-1])[2]
            if hwm_end > hwm_before:  # a new high-water mark was set in (or right at) the window
                peak = max(peak, hwm_end)
        return start, peak


# --- the local stack --------------------------------------------------------------------------------


@dataclass
class Dev:
    process: subprocess.Popen[bytes]
    base_url: str
    env: dict[str, str]
    state: dict[str, Any]
    log: Path

    def cli(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), *args, "--local", "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"phoneid {' '.join(args)}: {done.stderr or done.stdout}")
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_dev(directory: Path) -> Dev:
    """``phoneid dev`` on free ports (HTTP, moto, SFTP), its output in ``dev.log``."""
    import httpx

    port = free_port()
    state_file = directory / "dev.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PHONEID_", "MOTO_"))},
        "PHONEID_DEV_STATE": str(state_file),
        "PHONEID_SFTP_PORT": "0",
    }
    log = directory / "dev.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), "dev", "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"phoneid dev exited: {log.read_text()}")
        try:
            if httpx.get(f"{base_url}/_local/info", timeout=1).status_code == 200:
                return Dev(process, base_url, env, json.loads(state_file.read_text()), log)
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("phoneid dev did not start listening within 120 s")


# --- one run ---------------------------------------------------------------------------------------


@dataclass
class Step:
    name: str
    began: float
    ended: float

    @property
    def seconds(self) -> float:
        return self.ended - self.began


def _steps(sfn: Any, execution_arn: str) -> tuple[list[Step], list[dict[str, Any]]]:
    """Validate, VerifyChunks (the map) and Deliver, from the execution's history: entered → exited."""
    events: list[dict[str, Any]] = []
    token = None
    while True:
        page = sfn.get_execution_history(
            executionArn=execution_arn, maxResults=1000, **({"nextToken": token} if token else {})
        )
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            break
    entered: dict[str, float] = {}
    steps = []
    for event in events:
        kind = event["type"]
        if kind.endswith("StateEntered"):
            entered[event["stateEnteredEventDetails"]["name"]] = event["timestamp"].timestamp()
        elif kind.endswith("StateExited"):
            name = event["stateExitedEventDetails"]["name"]
            if name in STEPS and name in entered:
                steps.append(Step(name, entered[name], event["timestamp"].timestamp()))
    return steps, events


def _execution_of(
    sfn: Any, machine: str, key: str
) -> tuple[dict[str, Any], list[Step], list[dict[str, Any]]]:
    """The execution that processed the upload ``key`` (described), its steps and its events. An
    upload may start more than one (a redelivered event); the batch's state lets one through, so
    the one that got furthest is it."""
    found: list[tuple[int, dict[str, Any], list[Step], list[dict[str, Any]]]] = []
    for listed in sfn.list_executions(stateMachineArn=machine)["executions"]:
        described = sfn.describe_execution(executionArn=listed["executionArn"])
        if key not in (described.get("input") or ""):
            continue  # the warm-up's
        steps, events = _steps(sfn, listed["executionArn"])
        found.append((len(steps) * 1_000_000 + len(events), described, steps, events))
    if not found:
        raise RuntimeError(f"no execution of {machine} names {key}")
    _, described, steps, events = max(found, key=lambda each: each[0])
    return described, steps, events


def _count_records(path: Path) -> tuple[int, int]:
    """(D records, the trailer's count) of a delivered file."""
    details, trailer = 0, -1
    with path.open(newline="", encoding="utf-8") as text:
        for record in csv.reader(text):
            if record and record[0] == "D":
                details += 1
            elif record and record[0] == "T":
                trailer = int(record[1])
    return details, trailer


def floor_pass(path: Path) -> tuple[float, int]:
    """A plain csv + phonenumbers pass over the file: (seconds, numbers that are valid)."""
    import phonenumbers

    began = time.perf_counter()
    valid = 0
    with path.open(newline="", encoding="utf-8") as text:
        for record in csv.reader(text):
            if record[0] != "D" or not record[1]:
                continue
            try:
                number = phonenumbers.parse(record[1], "US")
            except phonenumbers.NumberParseException:
                continue
            valid += phonenumbers.is_valid_number(number)
    return time.perf_counter() - began, valid


def table_keys(dynamodb: Any, table: str) -> set[str]:
    """The ``pk`` of every item of the table."""
    keys = set()
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ProjectionExpression="pk"):
        keys.update(item["pk"]["S"] for item in page.get("Items", []))
    return keys


def floor_writes(dynamodb: Any, source_table: str, before: set[str]) -> tuple[float, int, int]:
    """A bare BatchWriteItem of every item the run made in ``source_table`` (its enrollments: the
    identities, their places and their numbers' rosters; items whose key is in ``before`` were there
    already), copied into a new table of the same moto: (seconds of the writes alone, items, bytes).
    The scan that reads them is not timed."""
    table = f"bench-floor-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    seconds, count, size = 0.0, 0, 0
    for page in dynamodb.get_paginator("scan").paginate(TableName=source_table):
        items = [item for item in page.get("Items", []) if item["pk"]["S"] not in before]
        count += len(items)
        size += sum(_item_bytes(item) for item in items)
        for first in range(0, len(items), 25):
            requests = {table: [{"PutRequest": {"Item": item}} for item in items[first : first + 25]]}
            began = time.perf_counter()
            while requests:
                requests = dynamodb.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
            seconds += time.perf_counter() - began
    dynamodb.delete_table(TableName=table)
    return seconds, count, size


WARM_UP_ROWS = 2_000


def warm_up(directory: Path, enroll_key: str, s3: Any, states: Any, bucket: str) -> None:
    """A small file through the workflow first, so that the measured run finds every step's worker
    processes started (as a stack in use would: Lambda's warm execution environments), MaxConcurrency
    of them for the chunks at most."""
    from phoneid.domain.connect import batch_id_of

    began = time.perf_counter()
    stamp = datetime(2026, 1, 1, tzinfo=UTC).strftime("%Y%m%d%H%M%S")
    generated = generate(directory, WARM_UP_ROWS, enroll_key, seed=1, stamp=stamp, customers="W")
    key = f"clients/{CLIENT}/upload/{generated.path.name}"
    s3.upload_file(str(generated.path), bucket, key)
    head = s3.head_object(Bucket=bucket, Key=key)
    batch_id = batch_id_of(key, head.get("VersionId") or str(head.get("ETag", "")).strip('"'))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        batch = states.get(batch_id)
        if batch is not None and batch.state.final:
            print(
                f"warm-up: {WARM_UP_ROWS:,} rows {batch.state.value} in {time.perf_counter() - began:.1f} s "
                "(starts the steps' worker processes)",
                flush=True,
            )
            return
        time.sleep(0.2)
    raise RuntimeError("the warm-up file did not finish within 300 s")


def run(rows: int, keep: bool, timeout: float) -> int:
    import boto3
    from botocore.config import Config

    directory = Path(tempfile.mkdtemp(prefix="phoneid-bench-connect-"))
    dev = None
    sampler = None
    try:
        print(f"working directory {directory}", flush=True)
        began = time.perf_counter()
        dev = start_dev(directory)
        print(f"phoneid dev (pid {dev.process.pid}) ready in {time.perf_counter() - began:.1f} s", flush=True)
        os.environ["AWS_ENDPOINT_URL"] = dev.state["awsEndpointUrl"]
        os.environ.update(dev.state["environment"])
        client = dev.cli("clients", "create", "--solution", "verified-user", "--name", CLIENT)
        client_id = client["client_id"]
        # the file goes straight to S3: the default transport, no SSH key
        profile = dev.cli("connect", "onboard", client_id, "--name", CLIENT, "--type", KIND)
        began = time.perf_counter()
        generated = generate(directory, rows, profile["enroll_key"])
        size = generated.path.stat().st_size
        print(
            f"generated {generated.path.name}: {rows:,} rows, {size / MB:.1f} MB "
            f"in {time.perf_counter() - began:.1f} s",
            flush=True,
        )

        from phoneid import bootstrap
        from phoneid.domain.connect import batch_id_of, download_key, errors_file_name, output_file_name

        bootstrap.reset()
        container = bootstrap.container()
        states = container.batch_states
        bucket = container.settings.connect_bucket
        config = Config(retries={"max_attempts": 10, "mode": "standard"}, read_timeout=300)
        s3 = boto3.client("s3", config=config)
        sfn = boto3.client("stepfunctions", config=config)
        dynamodb = boto3.client("dynamodb", config=config)
        machine = next(
            m["stateMachineArn"]
            for m in sfn.list_state_machines()["stateMachines"]
            if "connect" in m["name"].lower()
        )

        sampler = RssSampler(dev.process.pid)
        warm_up(directory, profile["enroll_key"], s3, states, bucket)
        keys_before = table_keys(dynamodb, container.settings.enrollments_table)
        sampler.read_workers()
        warm_workers = sampler.worker_peaks()
        load_before = os.getloadavg()[0]
        idle_rss, _ = sampler.read()
        sampler.start()
        key = f"clients/{CLIENT}/upload/{generated.path.name}"
        t0 = time.time()
        s3.upload_file(str(generated.path), bucket, key)
        uploaded = time.time()
        head = s3.head_object(Bucket=bucket, Key=key)
        batch_id = batch_id_of(key, head.get("VersionId") or str(head.get("ETag", "")).strip('"'))
        deadline = time.monotonic() + timeout
        batch, shown, progress = None, "", time.monotonic() + 60
        while time.monotonic() < deadline:
            batch = states.get(batch_id)
            if batch is not None:
                line = f"{batch.state.value} {dict(batch.counts or {}).get('valid', '')}"
                if line != shown:
                    print(f"  {time.time() - t0:7.1f} s  batch {batch.state.value}", flush=True)
                    shown = line
                if batch.state.final:
                    break
                if time.monotonic() > progress:  # a long run says how far it got, once a minute
                    progress += 60
                    rss, hwm = sampler.read()
                    pages = s3.get_paginator("list_objects_v2").paginate(
                        Bucket=bucket, Prefix=f"work/{batch_id}/results/"
                    )
                    done = sum(len(page.get("Contents", [])) for page in pages)
                    print(
                        f"  {time.time() - t0:7.1f} s  {batch.state.value}: {done} chunks with results; "
                        f"server RSS {rss / MB:.0f} MB, high-water {hwm / MB:.0f} MB",
                        flush=True,
                    )
            time.sleep(0.5)  # polling the batch's state in another process, as `connect submit` does
        finished = time.time()
        if batch is not None and batch.state.final and t0 < batch.updated_at.timestamp() < finished:
            finished = batch.updated_at.timestamp()  # the server's clock: when deliver wrote the state
        if batch is None or not batch.state.final:
            print(
                f"not finished after {timeout:g} s ({batch.state.value if batch else 'no batch'})", flush=True
            )
            _partial(sfn, machine, s3, bucket, key, batch_id, rows, t0, sampler)
            csv_seconds, valid_numbers = floor_pass(generated.path)
            print(
                f"  floor           csv + phonenumbers {csv_seconds:.1f} s ({valid_numbers:,} valid "
                "numbers); the enrollments' writes are measured once a run has finished"
            )
            return 1
        sampler.stop()
        end_to_end = finished - t0

        # Deliver writes the batch's final state, then returns: its exit follows in the history.
        settle = time.monotonic() + 60
        described, steps, events = _execution_of(sfn, machine, key)
        while described["status"] == "RUNNING" and time.monotonic() < settle:
            time.sleep(0.2)
            described, steps, events = _execution_of(sfn, machine, key)

        outputs = {}
        for name in (output_file_name(generated.path.name), errors_file_name(generated.path.name)):
            target = directory / name
            s3.download_file(bucket, download_key(CLIENT, name), str(target))
            outputs[name] = _count_records(target)
        (out_rows, out_trailer), (err_rows, err_trailer) = outputs.values()

        # The floor, in the same run: csv + phonenumbers, and the run's own enrollments written bare.
        csv_seconds, valid_numbers = floor_pass(generated.path)
        write_seconds, items, size = floor_writes(dynamodb, container.settings.enrollments_table, keys_before)
        enrolled = int((batch.counts or {}).get("enrolled", 0))
        floor = csv_seconds + write_seconds

        counts = dict(batch.counts or {})
        print()
        print(
            f"Connect bench: {rows:,} rows, Sandbox US, local stack (moto), MaxConcurrency 10, "
            f"{os.cpu_count()} CPUs, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after"
        )
        print(f"  batch           {batch.state.value}   {described['status']}   {len(events)} history events")
        print(f"  counts          {_counts_line(counts)}")
        print(f"  expected mix    {json.dumps(dict(sorted(generated.expected.items())))}")
        print(
            f"  files           output {out_rows:,} rows (trailer {out_trailer:,}), "
            f"errors {err_rows:,} rows (trailer {err_trailer:,}); together {out_rows + err_rows:,} "
            f"of {rows:,}: {'all rows accounted for' if out_rows + err_rows == rows else 'ROWS MISSING'}"
        )
        print(
            f"  end to end      {end_to_end:8.1f} s   {rows / end_to_end:8.0f} rows/s   "
            f"(upload {uploaded - t0:.1f} s; from upload to delivered {finished - uploaded:.1f} s)"
        )
        first = min((s.began for s in steps), default=uploaded)
        _, server_peak = sampler.window(uploaded, finished)
        print(
            f"  local stack     {idle_rss / MB:6.0f} MB RSS before the upload, "
            f"peak {server_peak / MB:.0f} MB, "
            f"{sampler.samples[-1][1] / MB:.0f} MB after (moto's storage, Step Functions, the API)"
        )
        print(f"  {'until Validate':<15} {first - uploaded:8.1f} s   (event → execution start)")
        written = {  # what each step leaves in moto's memory (a versioned bucket keeps deleted objects)
            "Validate": _stored(s3, bucket, f"work/{batch_id}/chunks/")
            + _stored(s3, bucket, f"work/{batch_id}/errors")
            + _stored(s3, bucket, f"work/{batch_id}/manifest"),
            "VerifyChunks": _stored(s3, bucket, f"work/{batch_id}/results/"),
            "Deliver": _stored(s3, bucket, f"clients/{CLIENT}/download/"),
        }
        peaks = sampler.worker_peaks()
        step_peaks = {}
        timed = {step.name: step for step in steps}
        for name in STEPS:
            step = timed.get(name)
            took = (
                f"{step.seconds:8.1f} s {rows / step.seconds:8.0f} rows/s" if step else "(not in the history)"
            )
            function = STEP_FUNCTIONS[name]
            if function in peaks:  # the step's own processes (phoneid_dev.processes)
                count, step_peaks[name] = peaks[function]
                warm = warm_workers.get(function, (0, 0))[0]
                memory = (
                    f"peak RSS {step_peaks[name] / MB:6.0f} MB in {count} worker process"
                    f"{'es' if count > 1 else ''} ({warm} warm at the start)"
                )
            elif step is not None:  # it ran in the server (PHONEID_LAMBDA_PROCESSES=0): an upper bound
                _, step_peaks[name] = sampler.window(step.began, step.ended)
                memory = f"peak RSS {step_peaks[name] / MB:6.0f} MB of the whole local stack"
            else:
                memory = "peak RSS unknown"
            print(
                f"  {name:<15} {took}   {memory}; "
                f"{written.get(name, 0) / MB:.1f} MB of objects written to moto"
            )
        print(
            f"  floor           {floor:8.1f} s   = csv + phonenumbers {csv_seconds:.1f} s "
            f"({valid_numbers:,} valid numbers) + BatchWriteItem of the {enrolled:,} enrollments' "
            f"{items:,} new items ({size / MB:.1f} MB) {write_seconds:.1f} s"
        )
        print(f"  ratio           {end_to_end / floor:8.1f} x the floor   (target 3x)")
        if set(step_peaks) == set(STEPS):
            worst = max(step_peaks.values())
        else:  # a step's memory is unknown: judge by the whole run, the server included
            worst = max([server_peak, *(peak for _, peak in peaks.values())])
            print(f"  steps           the memory of {sorted(set(STEPS) - set(step_peaks))} is unknown")
        print(
            "  targets         "
            "all rows complete: "
            f"{'yes' if out_rows + err_rows == rows and batch.state.value == 'delivered' else 'NO'}; "
            f"every step's peak RSS < 512 MB: {'yes' if worst < 512 * MB else 'NO'} ({worst / MB:.0f} MB); "
            f"within 3x the floor: {'yes' if end_to_end <= 3 * floor else 'NO'} ({end_to_end / floor:.1f} x)"
        )
        return 0
    finally:
        if dev is not None:
            dev.stop()
        if sampler is not None:
            sampler.stop()
        if keep:
            print(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def _stored(s3: Any, bucket: str, prefix: str) -> int:
    """Bytes of every version of every object under ``prefix`` (deleted ones included)."""
    total = 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        total += sum(int(version["Size"]) for version in page.get("Versions", []))
    return total


def _counts_line(counts: dict[str, Any]) -> str:
    """The batch's counts, the reason codes of rows not verified summed (their spread is the Sandbox's)."""
    reasons = sum(int(v) for k, v in counts.items() if k.startswith("reason:"))
    shown = {k: v for k, v in sorted(counts.items()) if not k.startswith("reason:")}
    return json.dumps(shown | {"reason:*": reasons})


def _item_bytes(item: dict[str, Any]) -> int:
    """DynamoDB's item size: attribute names plus values."""
    total = 0
    for name, value in item.items():
        ((_kind, data),) = value.items()
        total += len(name.encode()) + (len(data) if isinstance(data, bytes) else len(str(data).encode()))
    return total


def _partial(
    sfn: Any,
    machine: str,
    s3: Any,
    bucket: str,
    key: str,
    batch_id: str,
    rows: int,
    t0: float,
    sampler: RssSampler,
) -> None:
    """What a run that did not finish got done: its steps so far, the chunks with results, memory."""
    now = time.time()
    rss, hwm = sampler.read()
    print(f"  server RSS      {rss / MB:6.0f} MB now, high-water {hwm / MB:.0f} MB")
    _, steps, events = _execution_of(sfn, machine, key)
    chunks_written = _stored(s3, bucket, f"work/{batch_id}/chunks/") + _stored(
        s3, bucket, f"work/{batch_id}/errors"
    )
    for step in steps:
        start, peak = sampler.window(step.began, step.ended)
        print(
            f"  {step.name:<15} {step.seconds:8.1f} s {rows / step.seconds:8.0f} rows/s   peak RSS "
            f"{peak / MB:6.0f} MB (+{(peak - start) / MB:.0f} over {start / MB:.0f} at its start; "
            f"{chunks_written / MB:.1f} MB of objects written to moto)"
        )
    map_began = next(
        (e["timestamp"].timestamp() for e in events
         if e["type"] == "MapStateEntered" and e["stateEnteredEventDetails"]["name"] == "VerifyChunks"),
        None,
    )  # fmt: skip
    counted = {}
    for part in ("chunks", "results"):
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"work/{batch_id}/{part}/")
        counted[part] = sum(len(page.get("Contents", [])) for page in pages)
    print(
        f"  VerifyChunks    {counted['results']:,} of {counted['chunks']:,} chunks with results "
        f"after {now - t0:.0f} s"
    )
    if map_began is not None and counted["results"]:
        start, peak = sampler.window(map_began, now)
        per_chunk = (now - map_began) / counted["results"]
        left = (counted["chunks"] - counted["results"]) * per_chunk
        print(
            f"                  {now - map_began:.0f} s so far: {per_chunk:.2f} s a chunk, "
            f"{counted['results'] * 1000 / (now - map_began):.0f} rows/s; peak RSS {peak / MB:.0f} MB "
            f"(+{(peak - start) / MB:.0f}); the rest would take ~{left:.0f} s more "
            f"(end to end ~{now - t0 + left:.0f} s before Deliver)"
        )


# --- where verify_chunk's time goes -----------------------------------------------------------------


def profile(rows: int, top: int) -> int:
    """validate, verify_chunk over every chunk and deliver of an N-row file, in this process under
    ``mock_aws`` (no HTTP, no Step Functions; the Sandbox decides a chunk's rows in one thread), so
    that cProfile sees the whole call tree (moto's backends included) in one thread. The same file
    is run twice as two batches: once timed without the profiler, once profiled. Also counts the AWS
    calls per verified row."""
    import cProfile
    import io
    import pstats

    import boto3
    import botocore.client
    from moto import mock_aws

    from phoneid import bootstrap
    from phoneid.api.connect_steps import Accepted
    from phoneid.domain.clients import Flag, Solution
    from phoneid_dev.patches import apply_all
    from phoneid_dev.stack import LocalStack

    calls: Counter[str] = Counter()
    counting = [False]
    make_api_call = botocore.client.BaseClient._make_api_call

    def counted(self: Any, operation: str, params: Any) -> Any:
        if counting[0]:
            calls[f"{self.meta.service_model.service_name} {operation}"] += 1
        return make_api_call(self, operation, params)

    botocore.client.BaseClient._make_api_call = counted  # type: ignore[method-assign]
    directory = Path(tempfile.mkdtemp(prefix="phoneid-bench-connect-profile-"))
    apply_all()  # moto as `phoneid dev` runs it
    with mock_aws():
        stack = LocalStack(parameters={"Tier": "sandbox", "Region": "US", "LogLevel": "ERROR"}).provision()
        os.environ.update(stack.environment())
        bootstrap.reset()
        events = boto3.client("events")
        for rule in events.list_rules()["Rules"]:  # the steps are called here, not by the workflow
            ids = [t["Id"] for t in events.list_targets_by_rule(Rule=rule["Name"])["Targets"]]
            if ids:
                events.remove_targets(Rule=rule["Name"], Ids=ids)
        c = bootstrap.container()
        created = c.client_admin.create(
            solution=Solution.VERIFIED_USER, name=CLIENT, countries=["*"], flags=[Flag.AUTO_ENROLLMENT]
        )
        _, enroll_key = c.connect_onboarding.onboard(created.client.client_id, name=CLIENT, types=[KIND])
        connect = c.connect
        s3 = boto3.client("s3")
        bucket = c.settings.connect_bucket
        timings: dict[str, dict[str, float]] = {}
        profiler = cProfile.Profile()
        verified_rows = 0
        for run_name, stamp in (("timed", "20260301120000"), ("profiled", "20260301120001")):
            # new Client Customer IDs each run, so that the second run enrolls as much as the first
            generated = generate(directory, rows, enroll_key, stamp=stamp, customers=run_name[0].upper())
            key = f"clients/{CLIENT}/upload/{generated.path.name}"
            s3.upload_file(str(generated.path), bucket, key)
            etag = str(s3.head_object(Bucket=bucket, Key=key)["ETag"]).strip('"')
            began = time.perf_counter()
            validated = connect.validate.run(bucket, key, etag=etag)
            validate_s = time.perf_counter() - began
            assert isinstance(validated, Accepted), validated
            manifest = json.loads(s3.get_object(Bucket=bucket, Key=validated.manifest_key)["Body"].read())
            profiling = run_name == "profiled"
            counting[0] = profiling
            began = time.perf_counter()
            if profiling:
                profiler.enable()
            for item in manifest:
                verified_rows += (
                    connect.verify_chunk.run(item["batchId"], item["chunk"], item["key"]).rows * profiling
                )
            if profiling:
                profiler.disable()
            verify_s = time.perf_counter() - began
            counting[0] = False
            began = time.perf_counter()
            connect.deliver.run(validated.batch_id)
            deliver_s = time.perf_counter() - began
            timings[run_name] = {"validate": validate_s, "verify": verify_s, "deliver": deliver_s}

    print(f"Connect steps in one process (mock_aws, no HTTP), {rows:,} rows a run")
    for run_name, steps in timings.items():
        print(
            f"  {run_name:<9} validate {steps['validate']:6.1f} s ({rows / steps['validate']:6.0f} rows/s)   "
            f"verify_chunk x{len(manifest)} {steps['verify']:6.1f} s "
            f"({verified_rows / steps['verify']:5.0f} rows/s)   "
            f"deliver {steps['deliver']:5.1f} s"
        )
    print(f"  AWS calls while verifying {verified_rows:,} rows (per row):")
    for name, count in calls.most_common():
        print(f"    {name:<40} {count:8,}  {count / verified_rows:6.2f}")
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).strip_dirs().sort_stats(order).print_stats(top)
        print(f"\n  cProfile of verify_chunk, by {order}:")
        print(text.getvalue().split("\n", 4)[-1] if order == "tottime" else text.getvalue())
    shutil.rmtree(directory, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=800_000)
    parser.add_argument("--keep", action="store_true", help="keep the working directory (file, results, log)")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds to wait for the batch")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile the steps in this process instead (default 20,000 rows)",
    )
    parser.add_argument("--top", type=int, default=30, help="functions listed by --profile")
    args = parser.parse_args()
    if args.profile:
        return profile(args.rows if "--rows" in sys.argv else 20_000, args.top)
    return run(args.rows, args.keep, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
