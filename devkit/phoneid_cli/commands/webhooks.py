"""``phoneid webhooks``: change events whose deliveries failed (the dead-letter queue), and the
change monitor's latest pass."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from phoneid_cli.adapters.dead_letters import DeadLetters
from phoneid_cli.errors import CommandError
from phoneid_cli.output import show
from phoneid_cli.parsing import action_group, add_target
from phoneid_cli.targets import Context


def register(commands: Any) -> None:
    webhooks = action_group(commands, "webhooks", "change-event webhooks")
    failed = webhooks.add_parser(
        "failed", help="list the change events whose deliveries failed (the dead-letter queue), keeping them"
    )
    add_target(failed)
    failed.set_defaults(run=run_failed)
    redrive = webhooks.add_parser("redrive", help="send the failed change events to their webhooks again")
    add_target(redrive)
    redrive.set_defaults(run=run_redrive)
    status = webhooks.add_parser(
        "monitor-status", help="the change monitor's current or last pass: segments done, identities checked"
    )
    add_target(status)
    status.set_defaults(run=run_monitor_status)


def _dead_letters(args: argparse.Namespace, context: Context) -> DeadLetters:
    services = context.services(args)
    queue = services.settings.webhook_queue_url
    if not queue:
        raise CommandError("no webhook queue here: name the stack with --local or --stack NAME")
    return DeadLetters(services.sqs, queue)


def _row(message: dict[str, Any]) -> dict[str, Any]:
    """A dead-lettered event as listed: its number masked; a body that is no event said as such."""
    from phoneid.domain.phone import mask
    from phoneid.domain.webhooks import MalformedMessage, from_message

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
        return row | {"eventId": None, "eventType": None, "phoneNumber": None, "clientId": None}
    return row | {
        "eventId": event.event_id,
        "eventType": event.kind.value,
        "phoneNumber": mask(event.phone_number),
        "clientId": event.client_id,
    }


def run_failed(args: argparse.Namespace, context: Context) -> int:
    """The dead-letter queue's events, left in place (each listing counts as one receive)."""
    data = [_row(message) for message in _dead_letters(args, context).peek()]
    lines = [
        f"{r['eventId'] or '(malformed) ' + r['messageId']}  {r['eventType'] or '-'}"
        f"  {r['phoneNumber'] or '-'}  client={r['clientId'] or '-'}  receives={r['receives']}"
        f"  queued {r['queuedAt']}"
        for r in data
    ]
    show(data, args.json, lines or ["no failed change events"])
    return 0


def run_redrive(args: argparse.Namespace, context: Context) -> int:
    """Every dead-lettered event back to the webhook queue, with its event id unchanged."""
    moved = _dead_letters(args, context).redrive()
    show({"redriven": moved}, args.json, [f"{moved} change event(s) sent back to the webhook queue"])
    return 0


def run_monitor_status(args: argparse.Namespace, context: Context) -> int:
    """The latest monitor pass: its segments done of all, identities checked, events, its times."""
    services = context.services(args)
    if not services.settings.monitor_passes_table:
        raise CommandError("no monitor passes table here: name the stack with --local or --stack NAME")
    found = services.monitor_passes.status()
    if found is None:
        show(None, args.json, ["no monitor pass yet"])
        return 0
    latest, segments = found
    data = {
        "passId": latest.pass_id,
        "state": "finished" if latest.finished else "unfinished",
        "segmentsDone": latest.segments_done,
        "totalSegments": latest.total_segments,
        "segmentsStarted": len(segments),
        "checked": latest.checked,
        "events": latest.events,
        "startedAt": latest.started_at.isoformat(timespec="seconds"),
        "finishedAt": latest.finished_at.isoformat(timespec="seconds") if latest.finished_at else None,
    }
    lines = [
        f"pass {data['passId']}: {data['state']},"
        f" {data['segmentsDone']}/{data['totalSegments']} segments done ({data['segmentsStarted']} started)",
        f"  {data['checked']} identities checked, {data['events']} change events",
        f"  started {data['startedAt']}, finished {data['finishedAt'] or '-'}",
    ]
    show(data, args.json, lines)
    return 0
