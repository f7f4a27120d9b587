"""Many enrollments in a few calls (``POST /v3/identity/batch``, Connect's chunks), each as if enrolled
one after another."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from phoneid.adapters.dynamodb.enrollments.items import (
    ATTEMPTS,
    Cancelled,
    EnrollmentTable,
    holder_keeps_place,
    place_of,
)
from phoneid.domain.enrollment import Enrollment
from phoneid.domain.errors import PhoneIdError

_T = TypeVar("_T")
# New identities a transaction creates: 2 items each and at most one roster each (one per number),
# DynamoDB's limit is 100 items.
_GROUP = 33

Result = tuple[Enrollment, bool] | PhoneIdError


def _groups(items: Sequence[_T], size: int) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class BulkEnrollment:
    """``enroll_many`` on the table, with ``enroll`` (one at a time) for what the bulk calls leave."""

    def __init__(
        self, table: EnrollmentTable, enroll: Callable[[Enrollment], tuple[Enrollment, bool]]
    ) -> None:
        self._table = table
        self._enroll = enroll

    def enroll_many(self, enrollments: Sequence[Enrollment]) -> list[Result]:
        """``enroll`` of each, in order, as if one after another, in a few calls for all.

        The first enrollment of each place decides it; a later one of the same place gets that
        identity (``created`` False). Places are read with BatchGetItem; identities for free places
        are created in transactions of up to ``_GROUP`` (each identity with its place, so each stays
        atomic); a place about to change hands, a group whose transaction is cancelled (a place
        taken meanwhile: nothing of the group was written) and anything the bulk calls could not do
        go through ``enroll`` one by one, which looks again. An enrollment's own failure is its
        result; the others go on.
        """
        results: list[Result | None] = [None] * len(enrollments)
        first_of: dict[str, int] = {}
        for index, enrollment in enumerate(enrollments):
            first_of.setdefault(place_of(enrollment), index)
        one_by_one: list[int] = []
        try:
            free = self._settle_known(enrollments, first_of, results, one_by_one)
            sealed = dict(zip(free, self._table.seal_many([enrollments[i] for i in free]), strict=True))
            for group in _groups(free, _GROUP):
                pending = list(group)
                for _ in range(ATTEMPTS):
                    refused = self._create_group([(enrollments[i], sealed[i]) for i in pending])
                    if refused is None:
                        for index in pending:
                            results[index] = (enrollments[index], True)
                        pending = []
                        break
                    # Those whose place was taken meanwhile look again one by one; the rest retry.
                    one_by_one.extend(pending[n] for n in refused)
                    pending = [index for n, index in enumerate(pending) if n not in refused]
                    if not pending:
                        break
                one_by_one.extend(pending)
        except PhoneIdError:
            one_by_one = [i for i in first_of.values() if results[i] is None]
        for index in sorted(one_by_one):
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

    def _settle_known(
        self,
        enrollments: Sequence[Enrollment],
        first_of: Mapping[str, int],
        results: list[Result | None],
        one_by_one: list[int],
    ) -> list[int]:
        """Read the places and their holders: a place held stays with its identity (its result is
        set), a place changing hands goes to ``one_by_one``; returns the firsts of free places."""
        holders, unread = self._table.read_many(list(first_of))
        holding = {
            f"{enrollments[first_of[place]].client_id}#{holder['serviceId']}"
            for place, holder in holders.items()
        }
        identities, unread_identities = self._table.read_many(sorted(holding))
        free: list[int] = []
        for place, index in first_of.items():
            enrollment = enrollments[index]
            holder = holders.get(place)
            if place in unread:
                one_by_one.append(index)
            elif holder is None:
                free.append(index)
            else:
                pk = f"{enrollment.client_id}#{holder['serviceId']}"
                current = identities.get(pk)
                if (
                    pk not in unread_identities
                    and current is not None
                    and holder_keeps_place(current, enrollment)
                ):
                    results[index] = (self._table.enrollment(current, with_pii=False), False)
                else:
                    one_by_one.append(index)
        return free

    def _create_group(self, group: Sequence[tuple[Enrollment, bytes | None]]) -> set[int] | None:
        """Each identity with its free place, and their numbers' rosters, in one transaction. None
        when it was written; when it was cancelled, the positions in ``group`` whose items were
        refused (all when DynamoDB does not say which)."""
        items: list[dict[str, Any]] = []
        owners: list[set[int]] = []  # the positions in ``group`` each item is written for
        on_number: dict[tuple[str, str], list[int]] = {}
        for position, (enrollment, sealed_pii) in enumerate(group):
            items.append(self._table.identity_put(enrollment, sealed_pii))
            items.append(self._table.take_place(place_of(enrollment), enrollment.service_id, None))
            owners += [{position}, {position}]
            on_number.setdefault((enrollment.client_id, enrollment.phone_number), []).append(position)
        for (client_id, phone_number), positions in on_number.items():
            ids = [group[position][0].service_id for position in positions]
            items.append(self._table.join_roster(client_id, phone_number, ids))
            owners.append(set(positions))
        try:
            self._table.transact(items, "enrollment")
        except Cancelled as cancelled:
            # A roster refused (full, or changed meanwhile) sends its number's identities one by one.
            refused = {
                position
                for n, code in enumerate(cancelled.codes)
                if code not in ("None", "") and n < len(owners)
                for position in owners[n]
            }
            return refused or set(range(len(group)))
        return None

    def _enroll_or_error(self, enrollment: Enrollment) -> Result:
        try:
            return self._enroll(enrollment)
        except PhoneIdError as error:
            return error
