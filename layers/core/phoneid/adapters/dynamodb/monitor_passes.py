"""The monitor passes table (pk, sk): each pass's plan and totals, and each segment's progress.

- ``pass#<passId>``, ``-``: the pass (segments, started, finished, totals), written by its plan;
- ``pass#<passId>``, ``segment#<nnnnnn>``: one segment's position and counts, after each page;
- ``latest``, ``-``: the id of the latest pass planned (``phoneid webhooks monitor-status``).

Items expire (``ttl``) after ``KEPT``. No phone number or PII: a position is an enrollments table
key (client and service ids).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.monitor_pass import MonitorPass, SegmentProgress

KEPT: Final = timedelta(days=30)
_NONE: Final = "-"
_LATEST: Final = "latest"


class _Planned(Exception):
    pass


def _segment_sk(segment: int) -> str:
    return f"segment#{segment:06d}"


def _progress(values: dict[str, Any]) -> SegmentProgress:
    return SegmentProgress(
        segment=int(values["segment"]),
        position=values.get("position"),
        checked=int(values.get("checked", 0)),
        events=int(values.get("events", 0)),
        done=bool(values.get("done", False)),
    )


def _pass(values: dict[str, Any]) -> MonitorPass:
    finished = values.get("finishedAtMs")
    return MonitorPass(
        pass_id=str(values["passId"]),
        total_segments=int(values["totalSegments"]),
        started_at=from_ms(values["startedAtMs"]),
        finished_at=from_ms(finished) if finished is not None else None,
        checked=int(values.get("checked", 0)),
        events=int(values.get("events", 0)),
        segments_done=int(values.get("segmentsDone", 0)),
    )


class DynamoMonitorPasses:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def plan(self, planned: MonitorPass) -> MonitorPass:
        """Keep ``planned`` unless its pass is planned already: then the plan kept (a rerun of the
        same pass keeps its segments, so each goes on where it stopped)."""
        expires = int((planned.started_at + KEPT).timestamp())
        values = {
            "pk": f"pass#{planned.pass_id}",
            "sk": _NONE,
            "passId": planned.pass_id,
            "totalSegments": planned.total_segments,
            "startedAtMs": ms(planned.started_at),
            "ttl": expires,
        }
        try:
            with provider_errors("monitor pass write", condition_failed=_Planned):
                self._db.put_item(
                    TableName=self._table,
                    Item=to_item(values),
                    ConditionExpression="attribute_not_exists(pk)",
                )
        except _Planned:
            kept = self.get(planned.pass_id)
            assert kept is not None
            return kept
        with provider_errors("monitor pass write"):
            self._db.put_item(
                TableName=self._table,
                Item=to_item({"pk": _LATEST, "sk": _NONE, "passId": planned.pass_id, "ttl": expires}),
            )
        return planned

    def get(self, pass_id: str) -> MonitorPass | None:
        with provider_errors("monitor pass read"):
            response = self._db.get_item(
                TableName=self._table,
                Key=to_item({"pk": f"pass#{pass_id}", "sk": _NONE}),
                ConsistentRead=True,
            )
        item = response.get("Item")
        return _pass(plain(item)) if item else None

    def latest(self) -> MonitorPass | None:
        with provider_errors("monitor pass read"):
            response = self._db.get_item(TableName=self._table, Key=to_item({"pk": _LATEST, "sk": _NONE}))
        item = response.get("Item")
        return self.get(str(plain(item)["passId"])) if item else None

    def progress(self, pass_id: str, segment: int) -> SegmentProgress | None:
        with provider_errors("monitor pass read"):
            response = self._db.get_item(
                TableName=self._table,
                Key=to_item({"pk": f"pass#{pass_id}", "sk": _segment_sk(segment)}),
                ConsistentRead=True,
            )
        item = response.get("Item")
        return _progress(plain(item)) if item else None

    def save_progress(self, pass_id: str, progress: SegmentProgress, now: datetime) -> None:
        values: dict[str, Any] = {
            "pk": f"pass#{pass_id}",
            "sk": _segment_sk(progress.segment),
            "segment": progress.segment,
            "checked": progress.checked,
            "events": progress.events,
            "done": progress.done,
            "updatedAtMs": ms(now),
            "ttl": int((now + KEPT).timestamp()),
        }
        if progress.position is not None:
            values["position"] = progress.position
        with provider_errors("monitor pass write"):
            self._db.put_item(TableName=self._table, Item=to_item(values))

    def segments(self, pass_id: str) -> list[SegmentProgress]:
        query: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pass AND begins_with(sk, :segment)",
            "ExpressionAttributeValues": to_item({":pass": f"pass#{pass_id}", ":segment": "segment#"}),
            "ConsistentRead": True,
        }
        found: list[SegmentProgress] = []
        while True:
            with provider_errors("monitor pass read"):
                response = self._db.query(**query)
            found.extend(_progress(plain(item)) for item in response["Items"])
            if not response.get("LastEvaluatedKey"):
                return found
            query["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def save_totals(self, summary: MonitorPass) -> None:
        values: dict[str, Any] = {
            ":checked": summary.checked,
            ":events": summary.events,
            ":done": summary.segments_done,
        }
        update = "SET checked = :checked, events = :events, segmentsDone = :done"
        if summary.finished_at is not None:
            update += ", finishedAtMs = :finished"
            values[":finished"] = ms(summary.finished_at)
        with provider_errors("monitor pass write"):
            self._db.update_item(
                TableName=self._table,
                Key=to_item({"pk": f"pass#{summary.pass_id}", "sk": _NONE}),
                UpdateExpression=update,
                ExpressionAttributeValues=to_item(values),
            )
