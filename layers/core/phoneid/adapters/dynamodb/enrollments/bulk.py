"""Many enrollments in a few calls (``POST /v3/identity/batch``, Connect's chunks), each as if enrolled
one after another."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from phoneid.adapters.dynamodb.enrollments.items import (
    ATTEMPTS,
    Cancelled,
    EnrollmentTable,
    holder_keeps_place,
    place_of,
    roster_of,
)
from phoneid.domain.enrollment import ROSTER_LIMIT, Enrollment
from phoneid.domain.errors import PhoneIdError

# DynamoDB's limit of items in one transaction. A new identity is 2 items (the identity and its place),
# 3 when it takes a place over (the old holder leaves it), and each number of a group adds its roster:
# 33 new identities of distinct numbers a transaction.
_ITEMS = 100

Result = tuple[Enrollment, bool] | PhoneIdError
Number = tuple[str, str]  # (client id, E.164): a roster's


@dataclass(frozen=True)
class _Free:
    """The first enrollment of a place no identity keeps: written in a group, taking the place from
    ``previous`` (the serviceId its place item names, None when there is none), ``leaving`` the pk of
    the old holder that still names the place."""

    index: int
    previous: str | None = None
    leaving: str | None = None

    @property
    def size(self) -> int:
        return 3 if self.leaving else 2


def _number(enrollment: Enrollment) -> Number:
    return enrollment.client_id, enrollment.phone_number


def _groups(free: Sequence[_Free], enrollments: Sequence[Enrollment]) -> Iterator[list[_Free]]:
    """``free`` in order, cut into transactions of at most ``_ITEMS`` items, their rosters counted."""
    group: list[_Free] = []
    numbers: set[Number] = set()
    items = 0
    for entry in free:
        number = _number(enrollments[entry.index])
        more = entry.size + (0 if number in numbers else 1)
        if group and items + more > _ITEMS:
            yield group
            group, numbers, items = [], set(), 0
            more = entry.size + 1
        group.append(entry)
        numbers.add(number)
        items += more
    if group:
        yield group


class BulkEnrollment:
    """``enroll_many`` on the table, in rounds of bulk calls; ``enroll`` (one at a time) only for what
    ``ATTEMPTS`` rounds leave undecided."""

    def __init__(
        self, table: EnrollmentTable, enroll: Callable[[Enrollment], tuple[Enrollment, bool]]
    ) -> None:
        self._table = table
        self._enroll = enroll

    def enroll_many(self, enrollments: Sequence[Enrollment]) -> list[Result]:
        """``enroll`` of each, in order, as if one after another, in a few calls for all.

        The first enrollment of each place decides it; a later one of the same place gets that
        identity (``created`` False). A round reads the places and their holders with BatchGetItem; a
        place held stays with its identity; identities for free places, and for places changing hands
        (an inactive identity without a clientCustomerId gives its place up), are created in
        transactions of up to 100 items, each identity with its place, so each stays atomic. A
        number's roster joins the transaction with as many of the number's new identities as it has
        room for: a roster refused (full, or changed meanwhile) is read, and the group written again
        with what fits, never one by one. A place taken meanwhile, a read left unprocessed or a failed
        call sends what it concerned to the next round, which reads again; only what ``ATTEMPTS``
        rounds leave goes through ``enroll``. An enrollment's own failure is its result; the others go
        on.
        """
        results: list[Result | None] = [None] * len(enrollments)
        first_of: dict[str, int] = {}
        for index, enrollment in enumerate(enrollments):
            first_of.setdefault(place_of(enrollment), index)
        rooms: dict[Number, int] = {}  # room left in a number's roster, once read
        pending = list(first_of.values())
        for _ in range(ATTEMPTS):
            if not pending:
                break
            # A bulk call that failed leaves the rest to the next round, which reads again.
            with contextlib.suppress(PhoneIdError):
                self._round(enrollments, pending, results, rooms)
            pending = [index for index in pending if results[index] is None]
        for index in pending:
            results[index] = self._enroll_or_error(enrollments[index])
        for index, enrollment in enumerate(enrollments):
            if results[index] is not None:
                continue
            decided = results[first_of[place_of(enrollment)]]
            if isinstance(decided, tuple):
                results[index] = (replace(decided[0], pii=None), False)
            else:  # the place's first enrollment failed: this one tries on its own
                results[index] = self._enroll_or_error(enrollment)
        settled = [result for result in results if result is not None]
        assert len(settled) == len(enrollments), "every enrollment has its result"
        return settled

    def _round(
        self,
        enrollments: Sequence[Enrollment],
        pending: Sequence[int],
        results: list[Result | None],
        rooms: dict[Number, int],
    ) -> None:
        """One round over the undecided firsts of their places: each decided, or left None for the
        next round (a read left unprocessed, a place taken meanwhile)."""
        free = self._settle_known(enrollments, pending, results)
        sealed = dict(
            zip(
                (entry.index for entry in free),
                self._table.seal_many([enrollments[entry.index] for entry in free]),
                strict=True,
            )
        )
        for group in _groups(free, enrollments):
            self._write_group(enrollments, group, sealed, results, rooms)

    def _settle_known(
        self, enrollments: Sequence[Enrollment], pending: Sequence[int], results: list[Result | None]
    ) -> list[_Free]:
        """Read the places and their holders: a place held stays with its identity (its result is
        set); returns the places to write, free or changing hands. A place or holder left unread
        stays undecided."""
        places = {place_of(enrollments[index]): index for index in pending}
        holders, unread = self._table.read_many(list(places))
        client_of = {place: enrollments[index].client_id for place, index in places.items()}
        holding = {f"{client_of[place]}#{holder['serviceId']}" for place, holder in holders.items()}
        identities, unread_identities = self._table.read_many(sorted(holding)) if holding else ({}, set())
        free: list[_Free] = []
        for place, index in places.items():
            enrollment = enrollments[index]
            holder = holders.get(place)
            if place in unread:
                continue
            if holder is None:
                free.append(_Free(index))
                continue
            pk = f"{enrollment.client_id}#{holder['serviceId']}"
            if pk in unread_identities:
                continue
            current = identities.get(pk)
            if current is not None and holder_keeps_place(current, enrollment):
                results[index] = (self._table.enrollment(current, with_pii=False), False)
            else:  # an inactive identity without a clientCustomerId gives its place to the new one
                leaving = pk if current is not None and current.get("place") == place else None
                free.append(_Free(index, holder["serviceId"], leaving))
        return free

    def _write_group(
        self,
        enrollments: Sequence[Enrollment],
        group: Sequence[_Free],
        sealed: Mapping[int, bytes | None],
        results: list[Result | None],
        rooms: dict[Number, int],
    ) -> None:
        """The group in one transaction; a refused roster is read and the group written again with
        what it has room for; an identity whose place was refused is left for the next round."""
        pending = list(group)
        for _ in range(ATTEMPTS):
            if not pending:
                return
            refused, rosters = self._create_group(enrollments, pending, sealed, rooms)
            if refused is None:
                for entry in pending:
                    results[entry.index] = (enrollments[entry.index], True)
                return
            if rosters:
                self._read_rooms(rosters, rooms)
            pending = [entry for position, entry in enumerate(pending) if position not in refused]

    def _create_group(
        self,
        enrollments: Sequence[Enrollment],
        group: Sequence[_Free],
        sealed: Mapping[int, bytes | None],
        rooms: dict[Number, int],
    ) -> tuple[set[int] | None, set[Number]]:
        """Each identity with its place, and their numbers' rosters as far as each has room, in one
        transaction. (None, ∅) when it was written; when it was cancelled, the positions in ``group``
        whose own items were refused (all when DynamoDB does not say which) and the numbers whose
        roster was refused."""
        items: list[dict[str, Any]] = []
        owners: list[set[int] | Number] = []  # what each item is written for: positions, or a roster
        on_number: dict[Number, list[str]] = {}
        for position, entry in enumerate(group):
            enrollment = enrollments[entry.index]
            place = place_of(enrollment)
            items.append(self._table.identity_put(enrollment, sealed[entry.index]))
            items.append(self._table.take_place(place, enrollment.service_id, entry.previous))
            owners += [{position}, {position}]
            if entry.leaving:
                items.append(self._table.leave_place(entry.leaving, place))
                owners.append({position})
            on_number.setdefault(_number(enrollment), []).append(enrollment.service_id)
        joining: dict[Number, int] = {}
        for number, ids in on_number.items():
            room = rooms.get(number, ROSTER_LIMIT)
            if room > 0:  # the first ones the roster has room for, as one after another would be
                items.append(self._table.join_roster(*number, ids[:room]))
                owners.append(number)
                joining[number] = len(ids[:room])
        try:
            self._table.transact(items, "enrollment")
        except Cancelled as cancelled:
            failed = [
                owners[n]
                for n, code in enumerate(cancelled.codes)
                if code not in ("None", "") and n < len(owners)
            ]
            if not failed:
                return set(range(len(group))), set()
            refused = {position for owner in failed if isinstance(owner, set) for position in owner}
            return refused, {owner for owner in failed if isinstance(owner, tuple)}
        for number, joined in joining.items():
            if number in rooms:
                rooms[number] -= joined
        return None, set()

    def _read_rooms(self, numbers: set[Number], rooms: dict[Number, int]) -> None:
        """The room left in each number's roster, read again (consistently); a roster left unread has
        none for this call (its identities are found through the index, as past a full roster)."""
        pks = {roster_of(*number): number for number in numbers}
        found, unread = self._table.read_many(sorted(pks))
        for pk, number in pks.items():
            listed = found.get(pk, {}).get("serviceIds", ())
            rooms[number] = 0 if pk in unread else max(0, ROSTER_LIMIT - len(listed))

    def _enroll_or_error(self, enrollment: Enrollment) -> Result:
        try:
            return self._enroll(enrollment)
        except PhoneIdError as error:
            return error
