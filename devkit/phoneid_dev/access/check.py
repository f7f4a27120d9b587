"""The IAM check: every recorded call allowed by its function's role; every grant used or explained.

``python -m phoneid_dev.access RECORDS [--unused]`` reads the records the test processes (and the
``phoneid dev`` and Lambda worker processes they started) wrote, and fails, with a report, on:

- a call the function's role does not allow: the function, the action and resource, why (no
  statement grants the action, it is granted on other resources only, a condition failed and with
  what, an explicit Deny), the stack's parameters and the test that made it;
- a call that could not be checked: an operation with no IAM mapping, a call in a function's code
  that no function could be found for, a stack or function the template does not know;
- a grant that breaks the rules of ``phoneid_dev.access.rules``: wider than the resources its calls
  used (``*`` only where AWS offers nothing narrower, or with a reason in ``Metadata.WideResources``),
  a ``kms:`` grant with no condition binding it to its use, a condition key its action does not
  support or its requests never carry. ``--static`` checks what the template alone tells, with no
  records;
- with ``--unused`` (the whole suite only: a part of it leaves grants unused by design): each action
  a role grants on a resource that no call used, unless the template's ``Metadata``
  (``UnexercisedGrants: {Function: {action: reason}}``) says why no test can use it; and each such
  reason that is no longer needed.
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phoneid_dev.access.actions.requests import Request
from phoneid_dev.access.policies.evaluation import Resolved, decide_request
from phoneid_dev.access.policies.resolver import Resolver
from phoneid_dev.access.policies.roles import Roles
from phoneid_dev.access.policies.statements import Grant, PolicyError
from phoneid_dev.access.recording.facts import StackFacts
from phoneid_dev.access.rules import TITLES, Finding, Usage, grouped, static_findings
from phoneid_dev.access.second_opinion import SecondOpinion, consult
from phoneid_dev.template import Template
from phoneid_dev.template import template as template_of_repository


@dataclass
class Records:
    """What the processes of one run wrote."""

    stacks: dict[str, StackFacts] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    unattributed: list[dict[str, Any]] = field(default_factory=list)
    broken: list[dict[str, Any]] = field(default_factory=list)
    # test process id -> [(time, test)] in the order the tests started
    tests: dict[int, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def read(cls, directory: Path) -> Records:
        records = cls()
        for path in sorted(directory.glob("*.jsonl")):
            for line in path.read_text().splitlines():
                if line.strip():
                    records.add(json.loads(line))
        for started in records.tests.values():
            started.sort()
        return records

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        if kind == "stack":
            self.stacks[record["key"]] = StackFacts.from_json(record)
        elif kind == "call":
            self.calls.append(record)
        elif kind == "unattributed":
            self.unattributed.append(record)
        elif kind == "test":
            self.tests[int(record["pid"])].append((float(record["time"]), str(record["test"])))
        else:
            self.broken.append(record)

    def test_of(self, record: Mapping[str, Any]) -> str:
        """The test that caused a call: named in the record, or the test its origin process was
        running when a subprocess made it."""
        if record.get("test"):
            return str(record["test"])
        started = self.tests.get(int(record.get("origin") or 0)) or []
        at = bisect.bisect_right(started, (float(record.get("time") or 0.0), "\uffff")) - 1
        return started[at][1] if at >= 0 else "(no test: set-up of the run)"


@dataclass(frozen=True)
class Denied:
    function: str
    action: str
    reason: str
    stack: str  # the deciding parameters


@dataclass
class Report:
    calls: int = 0
    functions: set[str] = field(default_factory=set)
    stacks: set[str] = field(default_factory=set)
    # a denial -> (resources, first test)
    denied: dict[Denied, tuple[list[str], str]] = field(default_factory=dict)
    unchecked: dict[str, str] = field(default_factory=dict)  # what could not be checked -> first test
    unused: list[Grant] = field(default_factory=list)
    stale_reasons: list[str] = field(default_factory=list)
    reasons_used: int = 0
    judged_unused: bool = False
    rules: list[Finding] = field(default_factory=list)  # grants too wide, unbound, with a bad key
    static_only: bool = False  # the template's rules alone, no records
    second_opinion: SecondOpinion | None = None  # the simulator's decisions beside ours (second_opinion.py)

    @property
    def ok(self) -> bool:
        agreed = self.second_opinion is None or self.second_opinion.ok
        return agreed and not (
            self.denied or self.unchecked or self.unused or self.stale_reasons or self.rules
        )

    def text(self) -> str:
        lines = [
            "IAM check of template.yaml's roles, what the template alone tells (--static)"
            if self.static_only
            else f"IAM check: {self.calls} distinct calls of {len(self.functions)} functions "
            f"on {len(self.stacks)} stack configurations"
        ]
        if self.denied:
            lines.append(f"\nCalls their function's role does not allow ({len(self.denied)}):")
            for denial, (resources, test) in sorted(self.denied.items(), key=lambda e: str(e[0])):
                more = f" (and {len(resources) - 3} more)" if len(resources) > 3 else ""
                lines += [
                    f"  {denial.function}  {denial.action}  on {', '.join(resources[:3])}{more}",
                    f"      why: {denial.reason}",
                    f"      stack: {denial.stack}",
                    f"      test: {test}",
                ]
        if self.unchecked:
            lines.append(f"\nCalls that could not be checked ({len(self.unchecked)}):")
            for what, test in sorted(self.unchecked.items()):
                lines += [f"  {what}", f"      test: {test}"]
        if self.unused:
            lines.append(
                f"\nGrants no call used and no reason explains ({len(self.unused)}); remove them, or say "
                "in template.yaml's Metadata.UnexercisedGrants why no test can use them:"
            )
            by_action: dict[tuple[str, str], list[str]] = defaultdict(list)
            for grant in sorted(self.unused, key=str):
                when = f" when {grant.condition}" if grant.condition else ""
                by_action[(grant.function, grant.action)].append(grant.shown_resource + when)
            lines += [
                f"  {function}  {action}  on {', '.join(on)}" for (function, action), on in by_action.items()
            ]
        if self.stale_reasons:
            lines.append(
                f"\nReasons in Metadata.UnexercisedGrants no longer needed ({len(self.stale_reasons)}):"
            )
            lines += [f"  {stale}" for stale in self.stale_reasons]
        if self.second_opinion is not None:
            lines += self.second_opinion.lines()
        for rule, findings in grouped(self.rules).items():
            lines.append(f"\n{TITLES[rule]} ({len(findings)}):")
            lines += [f"  {finding}" for finding in findings]
        if self.ok and self.static_only:
            lines.append("every grant as narrow as AWS allows or explained, bound to its use, its keys known")
        elif self.ok:
            verdict = "every call allowed"
            if self.judged_unused:
                verdict += f"; every grant used, or explained ({self.reasons_used} reasons)"
            lines.append(verdict)
        return "\n".join(lines)


class Check:
    def __init__(self, roles: Roles, records: Records) -> None:
        self.roles = roles
        self.records = records
        self._resolved: dict[tuple[str, str], list[Resolved]] = {}
        self._shown_parameters = roles.role_parameters()
        self.usage = Usage()

    def _statements(self, function: str, stack_key: str) -> list[Resolved]:
        key = (function, stack_key)
        if key not in self._resolved:
            facts = self.records.stacks[stack_key]
            resolver = Resolver(facts)
            self._resolved[key] = [
                Resolved.of(statement, resolver)
                for statement in self.roles.statements(function, facts.parameters)
            ]
        return self._resolved[key]

    def _stack_text(self, facts: StackFacts) -> str:
        return ", ".join(f"{name}={facts.parameters.get(name, '')!r}" for name in self._shown_parameters)

    def run(self, judge_unused: bool) -> Report:
        report = Report(judged_unused=judge_unused)
        used: set[Grant] = set()
        for record in self.records.calls:
            report.calls += 1
            function, test = str(record["function"]), self.records.test_of(record)
            report.functions.add(function)
            what = f"{function}  {record['service']}.{record['operation']}"
            if record.get("error"):
                report.unchecked.setdefault(f"{what}: {record['error']}", test)
                continue
            stack_key = str(record.get("stack"))
            facts = self.records.stacks.get(stack_key)
            if facts is None:
                report.unchecked.setdefault(f"{what}: its stack was not recorded", test)
                continue
            report.stacks.add(self._stack_text(facts))
            try:
                statements = self._statements(function, stack_key)
            except PolicyError as error:
                report.unchecked.setdefault(f"{what}: {error}", test)
                continue
            for request in (Request.from_json(each) for each in record["requests"]):
                decision = decide_request(statements, request)
                if decision.allowed:
                    used.update(decision.grants)
                    self.usage.note(request, decision, facts)
                    continue
                denial = Denied(function, request.action, decision.reason, self._stack_text(facts))
                resources, _ = report.denied.setdefault(denial, ([], test))
                if request.resource not in resources:
                    resources.append(request.resource)
        for record in self.records.unattributed:
            where = f"{record['service']}.{record['operation']} from {record['where']}"
            report.unchecked.setdefault(
                f"a call of a function's code that no function could be found for: {where} "
                "(a thread pool that does not pass the function's context on?)",
                self.records.test_of(record),
            )
        for record in self.records.broken:
            report.unchecked.setdefault(f"the recorder failed: {json.dumps(record)}", "")
        report.rules = sorted(
            set(static_findings(self.roles)) | set(self.usage.findings(self.roles)), key=lambda f: f.order
        )
        if judge_unused:
            self._judge_unused(report, used)
        return report

    def _judge_unused(self, report: Report, used: set[Grant]) -> None:
        granted: set[Grant] = set()
        for function in self.roles.functions:
            for parameters in self.roles.parameter_choices():
                granted |= self.roles.grants(function, parameters)
        reasons = self.roles.reasons()
        unused = granted - used
        explained = {
            (grant.function, grant.action) for grant in unused if (grant.function, grant.action) in reasons
        }
        report.unused = [grant for grant in unused if (grant.function, grant.action) not in reasons]
        report.reasons_used = len(explained)
        granted_actions = {(grant.function, grant.action) for grant in granted}
        for function, action in sorted(reasons):
            if not reasons[(function, action)]:
                report.stale_reasons.append(f"{function} {action}: the reason is empty")
            elif (function, action) not in granted_actions:
                report.stale_reasons.append(f"{function} {action}: the role grants no such action")
            elif (function, action) not in explained:
                report.stale_reasons.append(f"{function} {action}: the suite uses every grant of it")


def check_static(template: Template | None = None) -> Report:
    """The rules the template alone tells (no records): wide resources, unbound KMS grants,
    unsupported condition keys."""
    return Report(rules=static_findings(Roles(template or template_of_repository())), static_only=True)


def check(
    directory: Path, judge_unused: bool, template: Template | None = None, second_opinion: bool = True
) -> Report:
    checking = Check(Roles(template or template_of_repository()), Records.read(directory))
    report = checking.run(judge_unused)
    if second_opinion:  # every request decided again by an independent simulator (second_opinion.py)
        report.second_opinion = consult(checking)
    return report


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phoneid_dev.access", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "records", type=Path, nargs="?", help="the directory PHONEID_ACCESS_RECORDS named for the run"
    )
    parser.add_argument(
        "--unused", action="store_true", help="also fail on grants no call used (the whole suite only)"
    )
    parser.add_argument(
        "--static", action="store_true", help="only the rules the template alone tells (no records)"
    )
    parser.add_argument(
        "--no-second-opinion",
        action="store_true",
        help="do not have @cloud-copilot/iam-simulate decide every request again (the gate does)",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.static:
        report = check_static()
        print(report.text())
        return 0 if report.ok else 1
    if args.records is None:
        parser.error("the records' directory is needed, unless --static")
    if not args.records.is_dir():
        print(f"no records in {args.records}: run the tests with PHONEID_ACCESS_RECORDS={args.records}")
        return 2
    report = check(args.records, args.unused, second_opinion=not args.no_second_opinion)
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
