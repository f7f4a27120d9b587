"""Decision records: the client's own API to list, read, summarise and erase them (docs/decision-records.md).

How records are written: ``phoneid.services.decision_log``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from urllib.parse import unquote

from aws_lambda_powertools import Logger

from phoneid.api.decision_models import (
    DEFAULT_DAYS,
    MAX_SUMMARY_DAYS,
    Conversion,
    DayCounts,
    DecisionEraseResponse,
    DecisionListResponse,
    DecisionSummaryItem,
    DecisionSummaryResponse,
    DecisionView,
    FactShown,
    NumberShown,
    PolicyShown,
    PossessionShown,
)
from phoneid.api.models import CategoryResult
from phoneid.domain.clients import Caller
from phoneid.domain.decisions import (
    CHANNELS,
    DecisionQuery,
    DecisionRecord,
    Kind,
    Outcome,
    fact_source,
    stamp,
)
from phoneid.domain.errors import MalformedRequest, PhoneIdError
from phoneid.domain.phone import PhoneNumber, Region
from phoneid.domain.phone_access import checked_phone
from phoneid.domain.reasons import REASONS, describe
from phoneid.ports import Clock, DecisionStore
from phoneid.services.decision_log import DecisionLog
from phoneid.services.page_keys import PageKeys

logger = Logger(child=True)

MAX_ID = 128  # well past the longest id a record has: `{batchId}#{line}`, 32 hex digits, then the line


class DecisionBook:
    """``/v3/decisions``: a client's own records, listed, read, summarised and erased."""

    def __init__(
        self, store: DecisionStore, log: DecisionLog, page_keys: PageKeys, clock: Clock, region: Region
    ) -> None:
        self._store = store
        self._log = log
        self._page_keys = page_keys
        self._clock = clock
        self._region = region

    def list_page(
        self,
        caller: Caller,
        *,
        since: str | None,
        until: str | None,
        phone_number: str | None,
        kind: str | None,
        outcome: str | None,
        reason: int | None,
        client_request_id: str | None,
        limit: int,
        start_key: str | None,
    ) -> DecisionListResponse:
        client_id = caller.client_id
        after = self._page_keys.opened(client_id, start_key) if start_key is not None else None
        now = self._clock.now()
        # No `to`: no upper bound (a record another instance's clock stamped a moment ahead included).
        end = _moment(until, "to") if until else now + timedelta(days=1)
        start = _moment(since, "from") if since else now - timedelta(days=DEFAULT_DAYS)
        if start >= end:
            raise MalformedRequest(problems={"from": "must be before to"})
        number = self._phone(caller, phone_number) if phone_number else None
        query = DecisionQuery(
            since=start,
            until=end,
            number_mac=self._log.number_mac(client_id, number.e164) if number else None,
            kind=Kind(kind) if kind else None,
            outcome=Outcome(outcome) if outcome else None,
            reason=reason,
            request_mac=self._log.request_mac(client_id, client_request_id),
        )
        page = self._store.page(client_id, query, limit=limit, after=after)
        last = page.last_position
        return DecisionListResponse(
            results=[_summary_item(record) for record in page.items],
            lastKey=self._page_keys.seal(client_id, last) if last is not None else None,
        )

    def get(self, caller: Caller, decision_id: str) -> DecisionView:
        wanted = unquote(decision_id)
        if not wanted or len(wanted) > MAX_ID:  # longer than any id this service gives: no read
            raise DecisionNotFound()
        record = self._store.get(caller.client_id, wanted)
        if record is None:
            raise DecisionNotFound()
        return _view(record)

    def summary(self, caller: Caller, *, first: str | None, last: str | None) -> DecisionSummaryResponse:
        today = self._clock.now().date()
        last_day = _day(last, "to") if last else today
        first_day = _day(first, "from") if first else last_day - timedelta(days=DEFAULT_DAYS - 1)
        if first_day > last_day:
            raise MalformedRequest(problems={"from": "must not be after to"})
        if (last_day - first_day).days + 1 > MAX_SUMMARY_DAYS:
            raise MalformedRequest(problems={"from": f"a summary counts at most {MAX_SUMMARY_DAYS} days"})
        days = self._store.days(caller.client_id, first_day, last_day)
        return _summarised(first_day, last_day, days)

    def erase(self, caller: Caller, phone_number: str | None) -> DecisionEraseResponse:
        if not phone_number:
            raise MalformedRequest(problems={"phoneNumber": "is required"})
        number = self._phone(caller, phone_number)
        erased = self._store.erase(caller.client_id, self._log.number_mac(caller.client_id, number.e164))
        logger.info("decision records erased", extra={"phone": number.masked, "erased": erased})
        return DecisionEraseResponse(erased=erased)

    def _phone(self, caller: Caller, text: str) -> PhoneNumber:
        return checked_phone(caller, unquote(text), self._region)


class DecisionNotFound(PhoneIdError):
    """No record of this client has the id (another client's records are not found either)."""

    code = 8011
    status = 404
    default_message = "Decision not found"


# Times and days a query may name: every record's, with room to count back and ahead of them.
_YEARS = range(1970, 9999)


def _moment(text: str, name: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise MalformedRequest(problems={name: "is not an ISO 8601 time"}) from None
    if moment.year not in _YEARS:
        raise MalformedRequest(problems={name: "is not a time from 1970 to 9998"})
    return moment


def _day(text: str, name: str) -> date:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise MalformedRequest(problems={name: "is not an ISO 8601 date (YYYY-MM-DD)"}) from None
    if day.year not in _YEARS:
        raise MalformedRequest(problems={name: "is not a date from 1970 to 9998"})
    return day


def _summary_fields(record: DecisionRecord) -> dict[str, object]:
    number = record.number
    return {
        "id": record.id,
        "kind": record.kind.value,
        "flow": record.flow,
        "startedAt": stamp(record.started_at),
        "endedAt": stamp(record.ended_at),
        "outcome": record.outcome.value,
        "success": record.success,
        "reasonCodes": list(record.reasons) or None,
        "errorCode": record.error_code,
        "number": NumberShown(country=number.country, lastTwo=number.last_two) if number else None,
    }


def _summary_item(record: DecisionRecord) -> DecisionSummaryItem:
    return DecisionSummaryItem(**_summary_fields(record))


def _view(record: DecisionRecord) -> DecisionView:
    attempts = record.possession
    as_of = stamp(record.facts_at or record.ended_at)
    by_category: dict[str, list[int]] = {}
    for code in record.reasons:  # each code fails the category the catalogue gives it
        if code in REASONS:
            by_category.setdefault(REASONS[code][0].value, []).append(code)
    return DecisionView(
        **_summary_fields(record),
        tier=record.tier,
        region=record.region,
        step=record.step,
        clientRequestId=record.client_request_id,
        evaluation={
            category: CategoryResult(
                result=result,
                failureReasons={str(c): describe(c) for c in by_category.get(category, ())} or None,
            )
            for category, result in record.categories.items()
        }
        or None,
        monitoredCodes=list(record.monitored) or None,
        possession=PossessionShown(
            status=attempts.status,
            method=attempts.method,
            mobileAuth=attempts.mobile_auth,
            smsSent=attempts.sms_sent,
            otpEntries=attempts.otp_entries,
            linksSent=attempts.links_sent,
            linkOpened=attempts.link_opened,
            deviceKey=attempts.device_key,
        )
        if attempts
        else None,
        policy=PolicyShown(id=record.policy.id, version=record.policy.version, hash=record.policy.hash)
        if record.policy
        else None,
        facts=[
            FactShown(signal=signal, value=value, source=fact_source(signal), asOf=as_of)
            for signal, value in sorted(record.facts.items())
        ]
        or None,
    )


def _summarised(first: date, last: date, days: dict[date, dict[str, int]]) -> DecisionSummaryResponse:
    totals: dict[str, int] = {}
    by_day: list[DayCounts] = []
    for offset in range((last - first).days + 1):
        day = first + timedelta(days=offset)
        counts = days.get(day, {})
        for name, count in counts.items():
            totals[name] = totals.get(name, 0) + count
        if counts.get("total"):
            by_day.append(
                DayCounts(
                    day=day.isoformat(),
                    total=counts.get("total", 0),
                    passed=counts.get("outcome_pass", 0),
                    failed=counts.get("outcome_fail", 0),
                    errors=counts.get("outcome_error", 0),
                )
            )

    def prefixed(prefix: str) -> dict[str, int]:
        return {name[len(prefix) :]: n for name, n in sorted(totals.items()) if name.startswith(prefix) and n}

    return DecisionSummaryResponse(
        firstDay=first.isoformat(),
        lastDay=last.isoformat(),
        total=totals.get("total", 0),
        passed=totals.get("outcome_pass", 0),
        failed=totals.get("outcome_fail", 0),
        errors=totals.get("outcome_error", 0),
        byReasonCode=prefixed("reason_"),
        byKind=prefixed("kind_"),
        byDay=by_day,
        conversion={
            channel: _conversion(totals.get(tried, 0), totals.get(succeeded, 0))
            for channel, (tried, succeeded) in CHANNELS.items()
        },
    )


def _conversion(attempted: int, succeeded: int) -> Conversion:
    return Conversion(
        attempted=attempted, succeeded=succeeded, rate=round(succeeded / attempted, 4) if attempted else None
    )
