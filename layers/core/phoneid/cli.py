"""The ``phoneid`` command: the local stack, and operator tasks against a local or deployed stack.

Operator commands act on the stack named by --stack (a deployed CloudFormation stack), on a running
local stack with --local (the last one started here; --local PORT or --local URL names another), or
else on the environment's settings (PHONEID_TIER, tables, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from phoneid.domain.connect import Batch
    from phoneid.ports import BatchStates

START_LOCAL = "start it with make dev or phoneid dev"
# `phoneid dev --host` values meaning every interface: addresses a phone cannot open.
EVERY_INTERFACE = ("0.0.0.0", "::", "")  # noqa: S104 - naming the wildcard, not binding to it


class _CommandError(Exception):
    """Printed as ``phoneid: {message}``; exit code 2 (the command line asked for something wrong)
    unless told otherwise (1: what the command needs failed)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _target(args: argparse.Namespace) -> None:
    """Point boto3 and the settings at the chosen stack before the container is built."""
    from phoneid import bootstrap

    local = getattr(args, "local", None)
    if local is not None:
        from phoneid.dev.emulation import FAKE_CREDENTIALS

        facts = _local_stack(local)
        for name, value in FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        os.environ["AWS_ENDPOINT_URL"] = facts["awsEndpointUrl"]
        os.environ.update(facts["environment"])
        args.local_stack = facts
    elif getattr(args, "stack", None):
        os.environ.update(_deployed_environment(args.stack))
    else:
        _check_environment(args)
    bootstrap.reset()


def _check_environment(args: argparse.Namespace) -> None:
    """Without --local or --stack the settings come from the environment: say which are missing."""
    from pydantic import ValidationError

    from phoneid.config import Settings

    try:
        Settings.from_env()
    except ValidationError as error:
        command = " ".join(part for part in (args.command, getattr(args, "action", None)) if part)
        missing = [str(e["loc"][0]) for e in error.errors() if e["type"] == "missing" and e["loc"]]
        problem = (
            f"{len(missing)} of its settings, such as {missing[0]}, are not set"
            if missing
            else f"its settings are invalid ({_first_problem(error)})"
        )
        raise _CommandError(
            f"{command} needs a stack: add --local (the running local stack) or --stack NAME "
            f"(a deployed one), or set the stack's environment ({problem})"
        ) from None


def _first_problem(error: Any) -> str:
    first = error.errors()[0]
    return f"{'.'.join(str(part) for part in first['loc']) or 'value'}: {first['msg']}"


# --- the local stack: which one, and the address its links carry -------------------------------


def local_url(value: str) -> str:
    """``--local``'s value: a port of this machine or the URL of a local stack."""
    from urllib.parse import urlsplit

    text = value.strip().rstrip("/")
    if text.isdigit() and 0 < int(text) < 65536:
        return f"http://127.0.0.1:{int(text)}"
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.hostname and parts.path in ("", "/"):
        return text
    raise argparse.ArgumentTypeError(
        f"{value!r} is not a port or URL of a local stack (e.g. 3101 or http://127.0.0.1:3101); "
        "a file name goes before --local"
    )


def _local_stack(local: str | bool) -> dict[str, Any]:
    """The facts of the local stack ``--local`` names (``DevStack.facts``): with no value the one the
    state file names (the last started here), else the one answering at that URL."""
    if local is True:
        return _last_started_stack()
    url = str(local)
    facts = _ask_local_stack(url)
    if facts is None:
        from urllib.parse import urlsplit

        port = urlsplit(url).port or "PORT"
        raise _CommandError(
            f"no local stack answers at {url}: start one there (phoneid dev --port {port}) "
            "or check the address",
            exit_code=1,
        )
    return facts


def _last_started_stack() -> dict[str, Any]:
    """The stack of the state file. A stack that was killed leaves its file behind: when its
    process is gone or nothing answers at its address, the file is removed and that is said."""
    from phoneid.dev import server

    try:
        state = server.read_state()
    except FileNotFoundError:
        raise _CommandError(f"no local stack is running: {START_LOCAL}", exit_code=1) from None
    except ValueError:  # not JSON: not a file a running stack wrote
        state = {}
    url = state.get("localUrl") or state.get("baseUrl")
    facts = _ask_local_stack(url) if url and _process_lives(state.get("pid")) else None
    if facts is None:
        server.STATE_FILE.unlink(missing_ok=True)
        port = str(url).rsplit(":", 1)[-1] if url else ""
        last = f"last one on port {port} stopped" if port.isdigit() else "the last one stopped"
        raise _CommandError(f"no local stack is running ({last}): {START_LOCAL}", exit_code=1)
    return facts


def _process_lives(pid: object) -> bool:
    if not isinstance(pid, int) or sys.platform == "win32":
        return True  # nothing to check (an older state file): the address decides
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _ask_local_stack(url: str) -> dict[str, Any] | None:
    """``GET {url}/_local/info``: the stack's facts, or None when nothing listens there."""
    import urllib.error
    import urllib.request

    # Never through a proxy: the stack is on this machine or its network.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_local/info", timeout=15) as answer:
            facts = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        raise _CommandError(
            f"{url} is not a PhoneID local stack (GET /_local/info answered {error.code}): check the port",
            exit_code=1,
        ) from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, ConnectionRefusedError):
            return None
        raise _CommandError(
            f"cannot reach a local stack at {url} ({error.reason}): check the address", exit_code=1
        ) from None
    except ConnectionRefusedError:
        return None
    except (OSError, ValueError) as error:  # reset, timed out, not JSON
        raise _CommandError(
            f"the local stack at {url} did not answer ({error}): check it is running", exit_code=1
        ) from None
    needed = ("awsEndpointUrl", "environment")
    if not isinstance(facts, dict) or any(name not in facts for name in needed):
        raise _CommandError(
            f"{url} does not say its settings (GET /_local/info lacks {', '.join(needed)}): "
            "restart it with this version (make dev)",
            exit_code=1,
        )
    return facts


def lan_address() -> str | None:
    """This machine's address on its network, from the route to a private address: a UDP socket's
    ``connect`` only picks the route and sends nothing, so no network access is needed."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = str(probe.getsockname()[0])
        except OSError:  # no route: no network
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address  # noqa: S104


def public_base_url(
    host: str, port: int, public_url: str | None = None, lan: Callable[[], str | None] = lan_address
) -> str:
    """The base URL links in SMS and the WebSocket URL carry: ``--public-url`` if given, else the
    address listened on; for every interface (0.0.0.0, ::) the machine's LAN address, as a phone
    cannot open 0.0.0.0 (127.0.0.1 when there is no network)."""
    if public_url:
        return public_url.rstrip("/")
    if host in EVERY_INTERFACE:
        host = lan() or "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _public_url(value: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{value!r} is not an http(s) URL, e.g. http://192.168.1.20:3000")
    return value.strip().rstrip("/")


def _deployed_environment(stack_name: str) -> dict[str, str]:
    """The functions' environment of a deployed stack, resolved from its parameters and resources."""
    import boto3

    from phoneid.dev.stack import ENDPOINT_VARIABLE, LocalStack

    cloudformation = boto3.client("cloudformation")
    described = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in described.get("Parameters", [])}
    resolver = LocalStack(parameters=parameters, name=stack_name)
    for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack_name):
        for resource in page["StackResourceSummaries"]:
            resolver.physical_ids[resource["LogicalResourceId"]] = resource["PhysicalResourceId"]
    # Every function's variables (the settings need all of them), as CloudFormation resolved them; not
    # boto3's endpoint, empty in AWS, which would replace one this shell sets.
    environment: dict[str, str] = {}
    for function in resolver.template.functions.values():
        for name, value in function.environment.items():
            environment[name] = resolver.resolve(value)
    environment.pop(ENDPOINT_VARIABLE, None)
    return environment


def _print(data: Any, as_json: bool, lines: Sequence[str]) -> None:
    print(json.dumps(data, indent=2) if as_json else "\n".join(lines))


# --- commands ---------------------------------------------------------------------------------


def _dev(args: argparse.Namespace) -> int:
    from phoneid.dev.server import serve
    from phoneid.services.clients import InvalidClientSpec

    base_url = public_base_url(args.host, args.port, args.public_url)
    if args.host in EVERY_INTERFACE:
        print(
            f"phoneid dev: listening on every interface; links use {base_url} (--public-url sets another). "
            "Anyone on this network can reach this stack and its test credentials.",
            file=sys.stderr,
        )
    if args.connect_transport not in (None, "s3", "sftp", "none"):
        raise _CommandError(
            f"PHONEID_CONNECT_TRANSPORT={args.connect_transport!r}: use s3, sftp or none (or unset it)"
        )
    try:
        serve(
            host=args.host,
            port=args.port,
            tier=args.tier,
            region=args.region,
            base_url=base_url,
            connect_transport=args.connect_transport,
        )
    except InvalidClientSpec as error:  # only the seeded client can be refused
        raise _CommandError(
            f"PHONEID_CLIENT_SECRET: {error}: set a longer one, or unset PHONEID_CLIENT_ID and "
            "PHONEID_CLIENT_SECRET to have credentials made up"
        ) from None
    return 0


def _clients_create(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container
    from phoneid.domain.clients import Flag, Solution

    _target(args)
    created = container().client_admin.create(
        solution=Solution(args.solution),
        name=args.name,
        countries=args.countries.split(","),
        flags=[Flag(f) for f in args.flag] if args.flag is not None else [Flag.AUTO_ENROLLMENT],
    )
    client = created.client
    data = {
        "client_id": client.client_id,
        "client_secret": created.client_secret,
        "tier": client.tier,
        "region": client.region,
        "solution": client.solution.value,
        "countries": sorted(client.allowed_countries),
        "flags": sorted(f.value for f in client.flags),
    }
    _print(
        data,
        args.json,
        [f"{k}: {v if isinstance(v, str) else ','.join(v)}" for k, v in data.items()]
        + ["(the secret is shown only now; it is stored as a salted hash)"],
    )
    return 0


def _clients_list(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    clients = container().client_admin.list()
    data: list[dict[str, Any]] = [
        {
            "client_id": c.client_id,
            "name": c.name,
            "tier": c.tier,
            "region": c.region,
            "solution": c.solution.value,
            "countries": sorted(c.allowed_countries),
            "flags": sorted(f.value for f in c.flags),
            "enabled": c.enabled,
            "created_at": c.created_at.isoformat(),
            "webhook": c.webhook.url if c.webhook else None,  # never its secret
        }
        for c in clients
    ]
    lines = [
        f"{c['client_id']}  {c['tier']}/{c['region']}  {c['solution']}  countries={','.join(c['countries'])}"
        f"  flags={','.join(c['flags']) or '-'}  {c['name']}"
        + (f"  webhook={c['webhook']}" if c["webhook"] else "")
        for c in data
    ]
    _print(data, args.json, lines or ["no clients"])
    return 0


def _clients_enable(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    client = container().client_admin.set_enabled(args.client_id, args.action == "enable")
    print(f"{client.client_id}: {'enabled' if client.enabled else 'disabled'}")
    return 0


def _key_data(key: Any) -> dict[str, str]:
    return {"kid": key.kid, "not_before": key.not_before.isoformat(), "not_after": key.not_after.isoformat()}


def _token_keys_list(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    data = [_key_data(key) for key in container().verification_keys.published()]
    _print(data, args.json, [f"{k['kid']}  signs {k['not_before']} to {k['not_after']}" for k in data])
    return 0


def _token_keys_replace(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    data = [_key_data(key) for key in container().token_key_rotation.replace()]
    _print(
        data,
        args.json,
        [f"{k['kid']}  signs {k['not_before']} to {k['not_after']}" for k in data]
        + ["(tokens of the replaced keys stop verifying within 5 minutes; clients ask /token again)"],
    )
    return 0


def _read_text(path: Path) -> str:
    """A file named on the command line; a missing one is an OSError with its name (see main)."""
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as error:
        raise _CommandError(f"{path}: not UTF-8 text (byte {error.start}): save it as UTF-8") from None


def _read_policy(path: str) -> dict[str, Any]:
    """A policy document from a YAML or JSON file, validated; ``InvalidPolicy`` names the bad entry."""
    import yaml

    from phoneid.domain.policy import InvalidPolicy, parse_policy

    try:
        document = yaml.safe_load(_read_text(Path(path)))
    except yaml.YAMLError as error:
        raise InvalidPolicy(f"{path} is not YAML or JSON: {error}") from None
    parse_policy(document)
    data: dict[str, Any] = document
    return data


def _clients_update(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    policy = _read_policy(args.policy) if args.policy else None  # a bad file before any stack
    _target(args)
    if args.webhook is not None or args.no_webhook:
        return _clients_webhook(args)
    client = container().client_admin.update(
        args.client_id, policy=policy, default_policy=args.default_policy
    )
    version = client.policy.get("version") if client.policy else None
    print(f"{client.client_id}: policy {'version ' + str(version) if version else 'default'}")
    return 0


def _clients_webhook(args: argparse.Namespace) -> int:
    """Register a webhook (a new secret, printed once) or remove it."""
    from phoneid.bootstrap import container

    admin = container().client_admin
    if args.no_webhook:
        client = admin.remove_webhook(args.client_id)
        _print(
            {"client_id": client.client_id, "webhook": None},
            args.json,
            [f"{client.client_id}: no webhook (change events are still recorded)"],
        )
        return 0
    registered = admin.set_webhook(args.client_id, args.webhook)
    webhook = registered.client.webhook
    assert webhook is not None
    data = {"client_id": args.client_id, "webhook": webhook.url, "webhook_secret": registered.secret}
    _print(
        data,
        args.json,
        [f"{k}: {v}" for k, v in data.items()]
        + ["(the secret is shown only now; verify PhoneID-Signature with it: docs/webhooks.md)"],
    )
    return 0


def _webhook_queues(args: argparse.Namespace) -> tuple[Any, str, str]:
    """SQS, the webhook queue and its dead-letter queue (the one the queue's redrive policy names)."""
    from phoneid.bootstrap import container

    _target(args)
    services = container()
    queue = services.settings.webhook_queue_url
    if not queue:
        raise _CommandError("no webhook queue here: name the stack with --local or --stack NAME")
    sqs = services.sqs
    attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["RedrivePolicy"])["Attributes"]
    target = json.loads(attributes["RedrivePolicy"])["deadLetterTargetArn"]
    account, name = target.split(":")[4], target.split(":")[5]
    dead = sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    return sqs, queue, dead


def _dead_letters(sqs: Any, queue: str, hold_seconds: int) -> list[dict[str, Any]]:
    """Every message of ``queue``, each received once and hidden for ``hold_seconds`` meanwhile."""
    messages: dict[str, dict[str, Any]] = {}
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue,
            MaxNumberOfMessages=10,
            VisibilityTimeout=hold_seconds,
            WaitTimeSeconds=0,
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            return list(messages.values())
        messages.update({message["MessageId"]: message for message in batch})


def _webhooks_failed(args: argparse.Namespace) -> int:
    """The dead-letter queue's events, left in place (each listing counts as one receive)."""
    from datetime import UTC, datetime

    from phoneid.domain.phone import mask
    from phoneid.domain.webhooks import MalformedMessage, from_message

    sqs, _, dead = _webhook_queues(args)
    messages = _dead_letters(sqs, dead, hold_seconds=30)
    for message in messages:  # visible again at once: listing removes nothing
        sqs.change_message_visibility(
            QueueUrl=dead, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    data: list[dict[str, Any]] = []
    for message in messages:
        attributes = message.get("Attributes", {})
        sent = int(attributes.get("SentTimestamp", 0)) / 1000
        row: dict[str, Any] = {
            "messageId": message["MessageId"],
            "receives": int(attributes.get("ApproximateReceiveCount", 0)),
            "queuedAt": datetime.fromtimestamp(sent, UTC).isoformat(timespec="seconds"),
        }
        try:
            event = from_message(message["Body"])
        except MalformedMessage:
            row |= {"eventId": None, "eventType": None, "phoneNumber": None, "clientId": None}
        else:
            row |= {
                "eventId": event.event_id,
                "eventType": event.kind.value,
                "phoneNumber": mask(event.phone_number),
                "clientId": event.client_id,
            }
        data.append(row)
    lines = [
        f"{r['eventId'] or '(malformed) ' + r['messageId']}  {r['eventType'] or '-'}"
        f"  {r['phoneNumber'] or '-'}  client={r['clientId'] or '-'}  receives={r['receives']}"
        f"  queued {r['queuedAt']}"
        for r in data
    ]
    _print(data, args.json, lines or ["no failed change events"])
    return 0


def _webhooks_redrive(args: argparse.Namespace) -> int:
    """Every dead-lettered event back to the webhook queue, with its event id unchanged."""
    sqs, queue, dead = _webhook_queues(args)
    moved = 0
    for message in _dead_letters(sqs, dead, hold_seconds=120):
        sqs.send_message(QueueUrl=queue, MessageBody=message["Body"])
        sqs.delete_message(QueueUrl=dead, ReceiptHandle=message["ReceiptHandle"])
        moved += 1
    _print({"redriven": moved}, args.json, [f"{moved} change event(s) sent back to the webhook queue"])
    return 0


def policy_markdown() -> str:
    """The default policy as the tables of docs/fraud-policy.md."""
    from phoneid.domain.evaluation import default_policy
    from phoneid.domain.policy import SIGNAL_SOURCES
    from phoneid.domain.reasons import describe

    policy = default_policy()
    rows = [
        "| Code | Category | Meaning | Raised when | Source | Source down | Flows |",
        "|---|---|---|---|---|---|---|",
    ]
    for rule in policy.rules:
        sources = sorted({SIGNAL_SOURCES[c.signal] for c in rule.when})
        down = "fails (fail closed)" if rule.onSourceFailure.value == "fail" else "not raised (skipped)"
        flows = ", ".join(rule.flows) if len(rule.flows) < 3 else "all"
        action = "" if rule.action.value == "fail" else f" ({rule.action.value} only)"
        rows.append(
            f"| {rule.code} | {rule.category.value} | {describe(rule.code)}{action} "
            f"| {' and '.join(c.describe() for c in rule.when)} | {'; '.join(sources)} | {down} | {flows} |"
        )
    levels = ["", "| Level | Reason | Given when |", "|---|---|---|"]
    for level in policy.assurance:
        for name, reason in level.reasons.items():
            facts = [
                f"`{k}` {'>= ' if k == 'confirmedElements' else '= '}{str(v).lower()}"
                for k, v in reason.model_dump(exclude_none=True).items()
                if k != "codes"
            ]
            when = (
                "any of " + ", ".join(str(c) for c in reason.codes) + " raised"
                if reason.codes
                else (" and ".join(facts) or "always")
            )
            levels.append(f"| {level.level} | {name} | {when} |")
    return "\n".join(rows + levels) + "\n"


def _policy_show(args: argparse.Namespace) -> int:
    if args.markdown:
        sys.stdout.write(policy_markdown())
        return 0
    from importlib import resources

    sys.stdout.write(resources.files("phoneid").joinpath("policy/default.yaml").read_text("utf-8"))
    return 0


def _policy_check(args: argparse.Namespace) -> int:
    document = _read_policy(args.file)
    print(f"{args.file}: a valid policy (version {document['version']}, {len(document['rules'])} rules)")
    return 0


def _identities_import(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    path = Path(args.file)
    text = _read_text(path)  # a missing file is said before any stack is looked for
    _target(args)
    fmt = args.format or ("csv" if path.suffix.lower() == ".csv" else "jsonl")
    try:
        report = container().identity_import.run(text, fmt, skip_invalid=args.skip_invalid)
    except ValueError as error:  # a CSV header without the required columns
        raise _CommandError(f"{path}: {error}") from None
    for line, reason in report.rejected:
        print(f"{path}:{line}: rejected: {reason}", file=sys.stderr)
    identities = "identity" if report.imported == 1 else "identities"
    print(f"imported {report.imported} {identities}, rejected {len(report.rejected)}")
    return 1 if report.rejected and not args.skip_invalid else 0


def _signals_import(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container
    from phoneid.domain.signals import ListKind

    path = Path(args.file)
    text = _read_text(path)
    _target(args)
    fmt = args.format or ("csv" if path.suffix.lower() == ".csv" else "jsonl")
    try:
        report = container().signal_list_import.run(
            ListKind(args.kind), text, fmt, skip_invalid=args.skip_invalid
        )
    except ValueError as error:  # a CSV header that does not fit the kind
        raise _CommandError(f"{path}: {error}") from None
    for line, reason in report.rejected:
        print(f"{path}:{line}: rejected: {reason}", file=sys.stderr)
    print(
        f"imported {report.imported} {args.kind} records ({report.entries} entries), "
        f"rejected {len(report.rejected)}"
    )
    return 1 if report.rejected and not args.skip_invalid else 0


def _signals_kinds(args: argparse.Namespace) -> int:
    from phoneid.domain.signals import ListKind
    from phoneid.services.signal_lists import as_mapping, describe, field_summary, record_fields

    lines = [f"{k.value:<24} {field_summary(record_fields(k))}\n{'':<24} {describe(k)}" for k in ListKind]
    _print([as_mapping(k) for k in ListKind], args.json, lines)
    return 0


def sandbox_markdown() -> str:
    """The Sandbox users as the Markdown table of docs/sandbox.md."""
    from phoneid.domain.sandbox import Catalogue

    rows = [
        "| Scenario | Region | Phone number | Name | Date of birth | SSN | Solution | Behaviour |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for u in Catalogue.load():
        rows.append(
            f"| `{u.scenario.value}` | {u.region} | `{u.phone_number}` | {u.identity.first_name} "
            f"{u.identity.last_name} | {u.identity.dob} | {u.identity.ssn} | {u.solution_name} "
            f"| {u.description} |"
        )
    return "\n".join(rows) + "\n"


def _sandbox_users(args: argparse.Namespace) -> int:
    from phoneid.domain.sandbox import Catalogue

    if args.markdown:
        sys.stdout.write(sandbox_markdown())
        return 0
    users = list(Catalogue.load(args.region))
    data = [
        {
            "scenario": u.scenario.value,
            "region": u.region,
            "solution": u.solution_name,
            "phoneNumber": u.phone_number,
            "firstName": u.identity.first_name,
            "lastName": u.identity.last_name,
            "dob": u.identity.dob,
            "ssn": u.identity.ssn,
            "description": u.description,
        }
        for u in users
    ]
    lines = [
        f"{u['scenario']:<26} {u['region']}  {u['phoneNumber']:<14}  "
        f"{u['firstName'] + ' ' + u['lastName']:<24}  dob {u['dob']}  ssn {u['ssn']}  {u['solution']:<13}  "
        f"{u['description']}"
        for u in data
    ]
    _print(data, args.json, lines)
    return 0


# --- Connect (batch files) --------------------------------------------------------------------


def _stack_outputs(stack_name: str) -> dict[str, str]:
    import boto3

    described = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}


def _connect_bucket() -> str:
    from phoneid.bootstrap import container

    bucket = container().settings.connect_bucket
    if not bucket:
        raise _CommandError("this stack has no Connect bucket (CONNECT_BUCKET is not set)")
    return bucket


def _sftp_users(stack_name: str) -> Any:
    """The deployed stack's Transfer Family users, from its outputs (server id, user role)."""
    from phoneid.adapters.aws import new_client
    from phoneid.adapters.transfer import TransferSftpUsers

    outputs = _stack_outputs(stack_name)
    needed = ("ConnectSftpServerId", "ConnectSftpUserRoleArn")
    missing = [name for name in needed if not outputs.get(name)]
    if missing:
        raise _CommandError(f"stack {stack_name} has no Connect SFTP server (outputs {', '.join(missing)})")
    return TransferSftpUsers(
        new_client("transfer"),
        server_id=outputs["ConnectSftpServerId"],
        role_arn=outputs["ConnectSftpUserRoleArn"],
        bucket=_connect_bucket(),
    )


def _sftp_address(args: argparse.Namespace, client_name: str) -> str:
    if getattr(args, "local", None) is not None:
        sftp = getattr(args, "local_stack", {}).get("sftp") or {}
        if sftp:
            return f"sftp -P {sftp['port']} {client_name}@{sftp['host']}"
    elif getattr(args, "stack", None):
        endpoint = _stack_outputs(args.stack).get("ConnectSftpEndpoint")
        if endpoint:
            return f"sftp {client_name}@{endpoint}"
    return f"sftp {client_name}@{{sftp_host}}"


def _connect(args: argparse.Namespace, action: Any) -> int:
    """Run ``action(onboarding)`` on the chosen stack (operator mistakes: one line, exit code 2; main)."""
    from phoneid import bootstrap
    from phoneid.domain.connect import ConnectTransport

    _target(args)
    sftp = bootstrap.container().settings.connect_transport is ConnectTransport.SFTP
    if sftp and getattr(args, "stack", None) and args.run in (_connect_onboard, _connect_remove):
        bootstrap.override(sftp_users=_sftp_users(args.stack))
    code: int = action(bootstrap.container().connect_onboarding)
    return code


def _profile_data(profile: Any, args: argparse.Namespace, transport: Any) -> dict[str, Any]:
    """The profile as shown, with how the client sends files on this stack's transport."""
    from phoneid.domain.connect import ConnectTransport
    from phoneid.services.connect_onboarding import ssh_key_fingerprint

    name = profile.client_name
    data: dict[str, Any] = {
        "client_id": profile.client_id,
        "client_name": name,
        "types": sorted(profile.types),
        "emails": list(profile.emails),
        "transport": transport.value,
    }
    if transport is ConnectTransport.SFTP:
        data |= {
            # As `ssh-keygen -l` shows them: fingerprint, then the key type and its comment.
            "ssh_keys": [
                f"{ssh_key_fingerprint(key)} ({' '.join(key.split()[:1] + key.split()[2:])})"
                for key in profile.ssh_public_keys
            ],
            "upload": f"/upload  (clients/{name}/upload/ in the Connect bucket)",
            "download": f"/download  (clients/{name}/download/)",
        }
    elif transport is ConnectTransport.S3:
        where = _where(args)
        data |= {
            "upload": f"clients/{name}/upload/ in the Connect bucket: a URL per file "
            f"(phoneid connect upload-url {profile.client_id} FILE{where})",
            "download": f"clients/{name}/download/: the results' URLs come with it "
            f"(or phoneid connect download-url {profile.client_id} FILE{where})",
        }
    else:
        data |= {
            "upload": f"clients/{name}/upload/ in the Connect bucket: no client transport "
            "(only files the operator puts there run)",
            "download": f"clients/{name}/download/",
        }
    data["created_at"] = profile.created_at.isoformat() if profile.created_at else None
    if transport is ConnectTransport.SFTP:
        data["sftp"] = _sftp_address(args, name)
    return data


def _where(args: argparse.Namespace) -> str:
    """The target options a follow-up command needs: `` --stack NAME``, `` --local``."""
    if getattr(args, "stack", None):
        return f" --stack {args.stack}"
    local = getattr(args, "local", None)
    if local is True:
        return " --local"
    return f" --local {local}" if local is not None else ""


def _profile_lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for name, value in data.items():
        if isinstance(value, list):
            lines.append(f"{name}: {', '.join(value) or '-'}")
        else:
            lines.append(f"{name}: {value if value is not None else '-'}")
    return lines


def _read_ssh_keys(files: Sequence[str]) -> list[str]:
    """Every key line of every file (an authorized_keys-like file may hold several; # comments skipped)."""
    keys: list[str] = []
    for name in files:
        text = _read_text(Path(name).expanduser())
        if "PRIVATE KEY" in text:
            raise _CommandError(f"{name} is a private key: give its public key ({name}.pub)")
        keys.extend(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
        if not text.strip():
            raise _CommandError(f"{name}: no SSH public key in the file")
    return keys


_KEY_NOTE = (
    "(the Enroll Key is shown only now; it is stored as a salted hash. "
    "Each file's header record carries it: H,<enroll key>,<verification type>)"
)


def _connect_onboard(args: argparse.Namespace) -> int:
    def run(onboarding: Any) -> int:
        emails = [e for given in args.email or () for e in given.split(",")]
        profile, enroll_key = onboarding.onboard(
            args.client_id,
            name=args.name,
            types=args.type.split(","),
            ssh_keys=_read_ssh_keys(args.ssh_key or ()),
            emails=emails,
        )
        data = _profile_data(profile, args, onboarding.transport)
        data["enroll_key"] = enroll_key
        _print(data, args.json, [*_profile_lines(data), _KEY_NOTE])
        return 0

    return _connect(args, run)


def _connect_rotate_key(args: argparse.Namespace) -> int:
    def run(onboarding: Any) -> int:
        profile, enroll_key = onboarding.rotate_key(args.client_id)
        data = {"client_id": profile.client_id, "client_name": profile.client_name, "enroll_key": enroll_key}
        _print(
            data,
            args.json,
            [
                *_profile_lines(data),
                "(files carrying the old Enroll Key are rejected from now on)",
                _KEY_NOTE,
            ],
        )
        return 0

    return _connect(args, run)


def _connect_show(args: argparse.Namespace) -> int:
    def run(onboarding: Any) -> int:
        data = _profile_data(onboarding.show(args.client_id), args, onboarding.transport)
        _print(
            data,
            args.json,
            [*_profile_lines(data), "enroll_key: (never shown again; rotate-key makes a new one)"],
        )
        return 0

    return _connect(args, run)


def _connect_remove(args: argparse.Namespace) -> int:
    def run(onboarding: Any) -> int:
        profile = onboarding.remove(args.client_id)
        login = " and SFTP login" if profile.ssh_public_keys else ""
        print(
            f"{profile.client_id}: Connect removed ({profile.client_name}: profile, Enroll Key{login}); "
            "its files stay in the bucket until their retention ends"
        )
        return 0

    return _connect(args, run)


def url_lifetime(value: str) -> Any:
    """``--expires``: a number and a unit, ``90m``, ``24h``, ``7d`` (a bare number is seconds)."""
    from datetime import timedelta

    text = value.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "s")
    if not number.isdigit():
        raise argparse.ArgumentTypeError(f"{value!r} is not a duration such as 15m, 24h or 7d")
    return timedelta(seconds=int(number) * units[unit])


def _connect_urls(args: argparse.Namespace, *, upload: bool) -> int:
    def run(onboarding: Any) -> int:
        issued = onboarding.batch_urls(args.client_id, Path(args.file).name, args.expires, upload=upload)
        data: dict[str, Any] = {
            "client_id": issued.profile.client_id,
            "client_name": issued.profile.client_name,
            "file_name": issued.file_name,
            "key": issued.key,
            "expires_at": issued.expires_at.isoformat(),
        }
        if issued.upload is not None:
            data["upload"] = {"method": "PUT", "url": issued.upload}
        data["results"] = {
            kind: {"file_name": name, "method": "GET", "url": url}
            for kind, (name, url) in issued.results.items()
        }
        lines = [f"{name}: {data[name]}" for name in ("client_name", "file_name", "key", "expires_at")]
        if issued.upload is not None:
            lines += [
                "",
                f"upload (PUT, no headers needed): {issued.upload}",
                f"  curl --fail -T {issued.file_name} '{issued.upload}'",
            ]
        lines += ["", "results (GET; 403 or 404 until the batch has written them):"]
        lines += [f"  {name}: {url}" for name, url in issued.results.values()]
        lines += [
            "",
            "(the batch is finished when its errors or its rejected file is there: the output is "
            "written before the errors file)",
        ]
        _print(data, args.json, lines)
        if _signed_with_session_credentials(args):
            print(
                "phoneid: note: signed with temporary credentials (a role or SSO session): the URLs stop "
                "working when that session ends, even before expires_at",
                file=sys.stderr,
            )
        return 0

    return _connect(args, run)


def _connect_upload_url(args: argparse.Namespace) -> int:
    return _connect_urls(args, upload=True)


def _connect_download_url(args: argparse.Namespace) -> int:
    return _connect_urls(args, upload=False)


def _signed_with_session_credentials(args: argparse.Namespace) -> bool:
    """Whether the URLs were signed with temporary credentials (not on the local stack, whose moto
    checks neither signatures nor expiry)."""
    if getattr(args, "local", None) is not None:
        return False
    import boto3

    credentials = boto3.Session().get_credentials()
    return bool(credentials is not None and credentials.token)


def _batch_data(batch: Batch) -> dict[str, Any]:
    import dataclasses

    data: dict[str, Any] = {}
    for name, value in dataclasses.asdict(batch).items():
        if hasattr(value, "isoformat"):
            value = value.isoformat()
        elif hasattr(value, "value"):
            value = value.value
        data[name] = value
    return data


def _batch_summary(data: dict[str, Any]) -> str:
    """State, counts and reason: ``delivered  rowsRead=3, valid=1, ...``."""
    counts = ", ".join(f"{name}={count}" for name, count in (data.get("counts") or {}).items())
    reason = f"reason={data['reason']}" if data.get("reason") else ""
    return "  ".join(part for part in (f"{data.get('state', ''):<10}", counts, reason) if part).rstrip()


def _batch_line(data: dict[str, Any]) -> str:
    return (
        f"{data.get('created_at', '')}  {data.get('client_name') or '-'}  {data.get('file_name', '')}  "
        f"{_batch_summary(data)}"
    )


def _client_of_file(file_name: str) -> str:
    from phoneid.domain.connect import parse_file_name

    parsed = parse_file_name(file_name)
    return parsed.client_name if parsed else file_name.split("_", 1)[0]


def _connect_status(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    states = container().batch_states
    if args.file:
        name = Path(args.file).name
        batches = [b for b in states.list_recent(_client_of_file(name), limit=100) if b.file_name == name]
    else:
        batches = states.list_recent(args.client, limit=args.limit)
    data = [_batch_data(batch) for batch in batches]
    empty = f"no batch of {Path(args.file).name}" if args.file else "no batches"
    _print(data, args.json, [_batch_line(d) for d in data] or [empty])
    return 0


def _find_batch(
    states: BatchStates, batch_id: str, client_name: str, key: str, since: datetime
) -> Batch | None:
    batch = states.get(batch_id)
    if batch is not None:
        return batch
    # The object's version as the workflow saw it may differ (no versionId in the event): by key.
    recent = [b for b in states.list_recent(client_name, limit=20) if b.key == key and b.created_at >= since]
    return recent[0] if recent else None


def _chunks_done(s3: Any, bucket: str, batch_id: str) -> int:
    """Chunks whose results are written (each chunk task writes one object when it is done)."""
    from phoneid.domain.connect import work_prefix

    done = 0
    pages = s3.get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=f"{work_prefix(batch_id)}results/"
    )
    for page in pages:
        done += int(page.get("KeyCount", 0))
    return done


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * min(done, total) // max(total, 1)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} chunks"


def _connect_submit(args: argparse.Namespace) -> int:
    import time
    from datetime import UTC, datetime, timedelta

    from botocore.exceptions import ClientError

    from phoneid.adapters.aws import error_code
    from phoneid.bootstrap import container
    from phoneid.dev.sftp import s3_client
    from phoneid.domain.connect import (
        batch_id_of,
        download_key,
        errors_file_name,
        output_file_name,
        rejected_file_name,
        upload_key,
    )

    path = Path(args.file)
    if not path.is_file():
        raise _CommandError(f"{path}: no such file: check the path")
    _target(args)
    client_name = _client_of_file(path.name)
    profile = container().connect_profiles.get_by_name(client_name)
    if profile is None:
        raise _CommandError(
            f"no Connect client named {client_name!r} (from the file name): onboard it first "
            "(phoneid connect onboard CLIENT_ID --name ... --local)"
        )
    bucket = _connect_bucket()

    s3 = s3_client()
    key = upload_key(client_name, path.name)
    since = datetime.now(UTC) - timedelta(seconds=5)
    size = path.stat().st_size
    sent = [0]
    interactive = sys.stderr.isatty()

    def progress(text: str, final: bool = False) -> None:
        if interactive:
            print(f"\r{text:<100}", end="\n" if final else "", file=sys.stderr, flush=True)
        elif final or not text.startswith(path.name + ": uploading"):
            print(text, file=sys.stderr, flush=True)

    def uploaded(chunk: int) -> None:
        sent[0] += chunk
        progress(f"{path.name}: uploading {sent[0] * 100 // max(size, 1)}% of {size:,} bytes")

    s3.upload_file(str(path), bucket, key, Callback=uploaded)
    head = s3.head_object(Bucket=bucket, Key=key)
    progress(f"{path.name}: uploaded to s3://{bucket}/{key}", final=True)

    states = container().batch_states
    batch_id = batch_id_of(key, head.get("VersionId") or str(head.get("ETag", "")).strip('"'))
    deadline = time.monotonic() + args.timeout
    shown, batch = "", None
    while time.monotonic() < deadline:
        batch = _find_batch(states, batch_id, client_name, key, since)
        if batch is not None:
            line = f"{path.name}: {_batch_summary(_batch_data(batch))}"
            if batch.state.value == "verifying" and batch.chunks:
                line += " " + _bar(_chunks_done(s3, bucket, batch.batch_id), batch.chunks)
            if line != shown:
                progress(line, final=batch.state.final)
                shown = line
            if batch.state.final:
                break
        elif not shown:
            shown = f"{path.name}: waiting for the workflow to pick the file up"
            progress(shown)
        time.sleep(0.5)  # polling a batch that runs in another process
    else:
        progress(f"{path.name}: still not finished after {args.timeout:g} s", final=True)
        return 1

    assert batch is not None
    for name in (output_file_name(path.name), errors_file_name(path.name), rejected_file_name(path.name)):
        target = path.with_name(name)
        try:
            s3.download_file(bucket, download_key(client_name, name), str(target))
        except ClientError as error:
            if error_code(error) not in ("404", "NoSuchKey", "NotFound"):
                raise
            continue  # a file this batch did not produce
        print(f"wrote {target}")
    return 0 if batch.state.value == "delivered" else 1


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other failure (exit code 2)."""

    def error(self, message: str) -> Any:
        where = self.prog.removeprefix("phoneid").strip()
        self.exit(2, f"phoneid: {where + ': ' if where else ''}{message} ({self.prog} -h shows the usage)\n")


LOCAL_HELP = (
    "the running local stack: alone, the last one started here (make dev); "
    "with a port or URL (3101, http://127.0.0.1:3101), the one there"
)


def _add_local(parser: argparse.ArgumentParser | Any, *, required: bool = False) -> None:
    parser.add_argument(
        "--local",
        nargs="?",
        const=True,
        type=local_url,
        required=required,
        metavar="PORT|URL",
        help=LOCAL_HELP,
    )


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="phoneid", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = root.add_subparsers(dest="command", required=True)

    dev = commands.add_parser("dev", help="start the local stack")
    dev.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1); 0.0.0.0: every interface, so a phone on "
        "this network can open the links (it also exposes the stack and its test credentials there)",
    )
    dev.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    dev.add_argument(
        "--public-url",
        type=_public_url,
        metavar="URL",
        help="the base URL of links in SMS and of the WebSocket (default http://HOST:PORT; with --host "
        "0.0.0.0, this machine's LAN address)",
    )
    dev.add_argument(
        "--tier", choices=["sandbox", "production"], default=os.environ.get("PHONEID_TIER", "sandbox")
    )
    dev.add_argument("--region", choices=["US", "EU"], default=os.environ.get("PHONEID_REGION", "US"))
    dev.add_argument(
        "--connect-transport",
        choices=["s3", "sftp", "none"],
        default=os.environ.get("PHONEID_CONNECT_TRANSPORT") or None,
        help="how Connect clients send files, as the template's ConnectTransport (default: the "
        "template's, s3; PHONEID_CONNECT_TRANSPORT sets it too)",
    )
    dev.set_defaults(run=_dev)

    def targeted(sub: argparse.ArgumentParser) -> None:
        where = sub.add_mutually_exclusive_group()
        _add_local(where)
        where.add_argument("--stack", help="a deployed CloudFormation stack name")
        sub.add_argument("--json", action="store_true", help="print JSON")

    clients = commands.add_parser("clients", help="API clients").add_subparsers(dest="action", required=True)
    create = clients.add_parser("create", help="create a client; prints its secret once")
    create.add_argument("--solution", choices=["identity", "verified-user"], default="identity")
    create.add_argument("--name", default="")
    create.add_argument("--countries", default="*", help="'*' (the whole region) or ISO codes, e.g. US,CA")
    create.add_argument(
        "--flag",
        action="append",
        choices=["phone-number-change", "key-persistence", "auto-enrollment", "po-box-addresses"],
        help="operator flag to switch on (repeat); default: auto-enrollment only",
    )
    targeted(create)
    create.set_defaults(run=_clients_create)
    listing = clients.add_parser("list", help="list clients (never their secrets)")
    targeted(listing)
    listing.set_defaults(run=_clients_list)
    for action in ("disable", "enable"):
        toggle = clients.add_parser(action, help=f"{action} a client")
        toggle.add_argument("client_id")
        targeted(toggle)
        toggle.set_defaults(run=_clients_enable)

    update = clients.add_parser("update", help="change a client's fraud policy or webhook (one at a time)")
    update.add_argument("client_id")
    chosen = update.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--policy", help="a policy file (YAML or JSON, the shape of `phoneid policy show`)")
    chosen.add_argument("--default-policy", action="store_true", help="back to the stack's default policy")
    chosen.add_argument(
        "--webhook",
        metavar="URL",
        help="where change events are POSTed (https; http for loopback); prints a new signing secret once",
    )
    chosen.add_argument("--no-webhook", action="store_true", help="stop change-event deliveries")
    targeted(update)
    update.set_defaults(run=_clients_update)

    policy = commands.add_parser("policy", help="the fraud policy").add_subparsers(
        dest="action", required=True
    )
    show = policy.add_parser("show", help="print the default policy (YAML), or its tables (--markdown)")
    show.add_argument("--markdown", action="store_true", help="the tables of docs/fraud-policy.md")
    show.set_defaults(run=_policy_show)
    check = policy.add_parser("check", help="validate a policy file; errors name the bad entry")
    check.add_argument("file")
    check.set_defaults(run=_policy_check)

    identities = commands.add_parser("identities", help="identity data").add_subparsers(
        dest="action", required=True
    )
    load = identities.add_parser("import", help="load identities from JSON Lines or CSV")
    load.add_argument("file")
    load.add_argument("--format", choices=["jsonl", "csv"])
    load.add_argument(
        "--skip-invalid", action="store_true", help="import the valid records even if some are not"
    )
    targeted(load)
    load.set_defaults(run=_identities_import)

    from phoneid.domain.signals import ListKind

    signals = commands.add_parser("signals", help="the operator's signal lists").add_subparsers(
        dest="action", required=True
    )
    signal_load = signals.add_parser("import", help="load one list from JSON Lines or CSV")
    signal_load.add_argument(
        "kind", choices=[k.value for k in ListKind], metavar="KIND", help=", ".join(k.value for k in ListKind)
    )
    signal_load.add_argument("file")
    signal_load.add_argument("--format", choices=["jsonl", "csv"])
    signal_load.add_argument(
        "--skip-invalid", action="store_true", help="import the valid records even if some are not"
    )
    targeted(signal_load)
    signal_load.set_defaults(run=_signals_import)
    kinds = signals.add_parser("kinds", help="each kind of list and the fields of its records")
    kinds.add_argument("--json", action="store_true")
    kinds.set_defaults(run=_signals_kinds)

    webhooks = commands.add_parser("webhooks", help="change-event webhooks").add_subparsers(
        dest="action", required=True
    )
    failed = webhooks.add_parser(
        "failed", help="list the change events whose deliveries failed (the dead-letter queue), keeping them"
    )
    targeted(failed)
    failed.set_defaults(run=_webhooks_failed)
    redrive = webhooks.add_parser("redrive", help="send the failed change events to their webhooks again")
    targeted(redrive)
    redrive.set_defaults(run=_webhooks_redrive)

    token_keys = commands.add_parser("token-keys", help="the keys that sign tokens").add_subparsers(
        dest="action", required=True
    )
    published = token_keys.add_parser("list", help="the published keys (the JWKS) and when each signs")
    targeted(published)
    published.set_defaults(run=_token_keys_list)
    replace = token_keys.add_parser(
        "replace", help="new keys for today and tomorrow in place of theirs (a suspected key exposure)"
    )
    targeted(replace)
    replace.set_defaults(run=_token_keys_replace)

    connect = commands.add_parser("connect", help="Connect batch files: onboarding, batches").add_subparsers(
        dest="action", required=True
    )
    onboard = connect.add_parser(
        "onboard", help="provision Connect for a client: Enroll Key (shown once), types, emails, SFTP login"
    )
    onboard.add_argument("client_id")
    onboard.add_argument(
        "--name", required=True, help="client name: file-name prefix, S3 prefix and SFTP user (acme)"
    )
    onboard.add_argument(
        "--type", required=True, metavar="TYPES", help="verifiedUser, humanAssurance or both, comma-separated"
    )
    onboard.add_argument(
        "--ssh-key",
        action="append",
        metavar="FILE",
        help="SFTP stacks only (needed there): an OpenSSH public key file (e.g. ~/.ssh/id_ed25519.pub); "
        "repeat for more",
    )
    onboard.add_argument(
        "--email",
        action="append",
        metavar="ADDRESS",
        help="where batch emails go; repeat (or comma-separate)",
    )
    targeted(onboard)
    onboard.set_defaults(run=_connect_onboard)
    for action, helped, run in (
        ("rotate-key", "a new Enroll Key (shown once); the old one stops working", _connect_rotate_key),
        ("show", "the client's Connect profile (never its Enroll Key)", _connect_show),
        ("remove", "remove Connect for a client: profile, Enroll Key and SFTP login", _connect_remove),
    ):
        sub = connect.add_parser(action, help=helped)
        sub.add_argument("client_id")
        targeted(sub)
        sub.set_defaults(run=run)
    for action, helped, run in (
        (
            "upload-url",
            "s3 stacks: a URL to PUT one batch file, and URLs to GET its results",
            _connect_upload_url,
        ),
        ("download-url", "s3 stacks: URLs to GET one batch file's results", _connect_download_url),
    ):
        sub = connect.add_parser(action, help=helped)
        sub.add_argument("client_id")
        sub.add_argument("file", help="the batch file (its name is enough: acme_US_verifiedUser_...csv)")
        sub.add_argument(
            "--expires",
            type=url_lifetime,
            default=url_lifetime("24h"),
            metavar="DURATION",
            help="how long the URLs work: 15m, 24h (the default), 7d at most",
        )
        targeted(sub)
        sub.set_defaults(run=run)
    status = connect.add_parser("status", help="the state of recent batches, or of one file's batches")
    status.add_argument("file", nargs="?", help="a batch file (its name is enough)")
    status.add_argument("--client", help="one client's batches (its client name)")
    status.add_argument("--limit", type=int, default=20)
    targeted(status)
    status.set_defaults(run=_connect_status)
    submit = connect.add_parser(
        "submit", help="put a file into its client's upload directory, wait, download the results beside it"
    )
    submit.add_argument("file")
    _add_local(submit, required=True)
    submit.add_argument("--timeout", type=float, default=3600, help="seconds to wait for the batch")
    submit.set_defaults(run=_connect_submit)

    sandbox = commands.add_parser("sandbox", help="Sandbox tier").add_subparsers(dest="action", required=True)
    users = sandbox.add_parser("users", help="list the Sandbox test users")
    users.add_argument("--region", choices=["US", "EU"])
    users.add_argument("--json", action="store_true")
    users.add_argument("--markdown", action="store_true", help="the table of docs/sandbox.md")
    users.set_defaults(run=_sandbox_users)
    root.epilog = (
        "commands:\n"
        + "\n".join(_overview(root))
        + "\n\n'phoneid COMMAND ACTION -h' for an action's options\n\n"
        "A failure is one line on stderr, 'phoneid: what went wrong: what to do', and exit code 2 when\n"
        "the command line asks for something wrong (an option, a file, a spec), 1 otherwise (nothing\n"
        "answers, AWS refuses, records are rejected). PHONEID_DEBUG=1 shows the traceback as well."
    )
    return root


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand, in the order they were added."""
    found: list[tuple[str, str, argparse.ArgumentParser]] = []
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def _overview(root: argparse.ArgumentParser) -> list[str]:
    """Every command and action with its help, from the parser: the overview cannot go stale."""
    lines = []
    for name, helped, command in _subcommands(root):
        actions = _subcommands(command)
        if not actions:
            lines.append(f"  phoneid {name:<28} {helped}")
        for action, action_help, _ in actions:
            lines.append(f"  phoneid {name + ' ' + action:<28} {action_help}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        code = int(args.run(args))
        sys.stdout.flush()  # a reader that went away shows here, not as a traceback at exit
    except BrokenPipeError:
        # The reader stopped early (`phoneid sandbox users | head`): stop quietly, as Python's docs
        # advise ("Note on SIGPIPE"): stdout to devnull so the flush at exit cannot fail again, and
        # exit code 1 as Python gives on EPIPE.
        _stdout_to_devnull()
        return 1
    except KeyboardInterrupt:
        print("phoneid: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get("PHONEID_DEBUG", "") not in ("", "0"):
            raise
        code, message = explain(error)
        print(f"phoneid: {message}", file=sys.stderr)
    return code


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (e.g. captured)
        pass


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error, then what it was raised from or while handling, outwards in."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def explain(error: BaseException) -> tuple[int, str]:
    """Exit code and one line for a failure: the first row of the table matching the error or one of
    its causes (a domain error may wrap the AWS error that says what to check)."""
    causes = list(_causes(error))
    for kinds, code, say in _failures():
        for cause in causes:
            if isinstance(cause, kinds):
                return code(cause) if callable(code) else code, say(cause)
    return 1, f"{type(error).__name__}: {error} (PHONEID_DEBUG=1 shows where it failed)"


def _failures() -> list[tuple[Any, Any, Callable[[Any], str]]]:
    """(exception types, exit code, message) in order: what the operator asked for wrong (2), then
    what failed on the way (1)."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        NoRegionError,
    )
    from pydantic import ValidationError

    from phoneid.adapters.transfer import SftpProvisioningFailed
    from phoneid.domain.errors import PhoneIdError
    from phoneid.domain.policy import InvalidPolicy
    from phoneid.services.clients import InvalidClientSpec
    from phoneid.services.connect_onboarding import InvalidConnectSpec

    return [
        (_CommandError, lambda e: e.exit_code, str),
        ((InvalidClientSpec, InvalidPolicy, InvalidConnectSpec), 2, str),
        (FileNotFoundError, 2, lambda e: f"{e.filename or e}: no such file: check the path"),
        (IsADirectoryError, 2, lambda e: f"{e.filename}: a directory, not a file"),
        (PermissionError, 2, lambda e: f"{e.filename or e}: permission denied"),
        (NoCredentialsError, 1, lambda e: _aws_credentials_missing()),
        (NoRegionError, 1, lambda e: "no AWS region: set AWS_REGION (or a profile with one: AWS_PROFILE)"),
        (EndpointConnectionError, 1, _unreachable),
        (ClientError, 1, _aws_refused),
        (SftpProvisioningFailed, 1, lambda e: f"{e}: check the Transfer Family server and its role"),
        (BotoCoreError, 1, lambda e: f"AWS: {e}: check the AWS settings (AWS_PROFILE, AWS_REGION)"),
        (ValidationError, 1, lambda e: f"invalid settings or data ({_first_problem(e)})"),
        (PhoneIdError, 1, lambda e: f"{e} (PHONEID_DEBUG=1 shows where it failed)"),
        (OSError, 1, lambda e: f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}"),
    ]


def _aws_credentials_missing() -> str:
    return (
        "no AWS credentials: configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID), "
        "or use --local for the local stack"
    )


def _unreachable(error: Any) -> str:
    url = error.kwargs.get("endpoint_url", "AWS")
    if os.environ.get("AWS_ENDPOINT_URL"):  # the local stack's moto
        return f"cannot reach the local stack's AWS at {url}: is the stack still running? ({START_LOCAL})"
    return f"cannot reach AWS at {url}: check the network and the region (AWS_REGION)"


def _aws_refused(error: Any) -> str:
    details = error.response.get("Error", {})
    code, said = details.get("Code", "?"), details.get("Message", "")
    if code in ("ExpiredToken", "ExpiredTokenException", "RequestExpired"):
        advice = "renew your AWS credentials (aws sso login, or new keys)"
    elif code in ("InvalidClientTokenId", "UnrecognizedClientException", "SignatureDoesNotMatch"):
        advice = "check your AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID)"
    elif "AccessDenied" in code or code in ("UnauthorizedOperation", "AuthorizationError"):
        advice = "use credentials allowed to do this (an operator role of the stack's account)"
    elif "does not exist" in said or "NotFound" in code:
        advice = "check the stack name (--stack) and the region (AWS_REGION)"
    else:
        advice = "check the stack name (--stack), the region (AWS_REGION) and your credentials"
    return f"AWS {error.operation_name} failed ({code}: {said}): {advice}"


if __name__ == "__main__":
    sys.exit(main())
