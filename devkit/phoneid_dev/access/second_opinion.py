"""A second opinion on every recorded request: an independent IAM simulator's decision beside ours.

Our evaluator (``policies``) is the check's judge; a fault in it (an operator read wrongly, a wildcard
matched too widely) would pass a call AWS refuses, or fail one AWS allows, with nothing to say so.
So every distinct request the check decided, allowed or denied, is decided again by
``@cloud-copilot/iam-simulate`` (npm, maintained, AGPL-3.0: run as a development tool, never
shipped), against the same identity policy: the function's statements as our evaluator sees them,
SAM's templates expanded, ``Fn::If`` decided and every value resolved for the recorded stack. Any
disagreement fails the check, with both decisions and both reasons.

- **One process.** The requests are deduplicated per (function, stack, action, resource, context)
  and written, with one policy per (function, stack), to one JSON batch that one
  ``node tools/iam-simulate/simulate.mjs`` evaluates; it explains only where it disagrees.
- **Identity policies only.** As our evaluator: no resource policy, KMS key policy, SCP or
  permissions boundary. The decision compared is the simulator's identity analysis (a KMS key's
  policy, which the template leaves to the account's IAM, is not given to it).
- **Never silent.** Node missing, the simulator failing or answering for fewer requests than it was
  asked, and a request it refuses to evaluate (an action or ARN its IAM data does not know) each fail
  the check with the reason.
- **Its known gap.** iam-simulate 0.1.173 drops ``kms:EncryptionContext:<name>`` from a request; the
  script passes it under a key it keeps, and fails once the gap is closed (see the script).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneid_dev.access.actions.requests import Request
from phoneid_dev.access.policies.evaluation import Decision, Resolved, decide_request
from phoneid_dev.access.policies.statements import PolicyError
from phoneid_dev.template import repository_root

if TYPE_CHECKING:
    from phoneid_dev.access.check import Check

SIMULATOR = "@cloud-copilot/iam-simulate"
TIMEOUT_SECONDS = 600


def script() -> Path:
    return repository_root() / "tools" / "iam-simulate" / "simulate.mjs"


@dataclass(frozen=True)
class Disagreement:
    """One request our evaluator and the simulator decide differently."""

    function: str
    action: str
    resource: str
    ours: str  # "allowed (…)" or "denied: why"
    theirs: str  # the simulator's decision and how it judged each statement naming the action
    stack: str  # the deciding parameters
    test: str


@dataclass
class SecondOpinion:
    """What the simulator said of a check run's requests."""

    simulator: str = SIMULATOR
    requests: int = 0
    simulated: int = 0  # the requests simulated: those of one role and request once
    seconds: float = 0.0
    disagreements: list[Disagreement] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # request it could not evaluate -> first test
    error: str | None = None  # the simulator could not be run, or answered wrongly

    @property
    def ok(self) -> bool:
        return not (self.disagreements or self.refused or self.error)

    def lines(self) -> list[str]:
        if self.error is not None:
            return [f"\nThe second opinion ({self.simulator}) could not be had: {self.error}"]
        lines = [
            f"\nSecond opinion: {self.simulator} on {self.requests} distinct requests ({self.simulated} "
            f"simulated), identity policies only, in {self.seconds:.1f} s"
        ]
        if self.disagreements:
            lines.append(f"Requests it decides otherwise than the check ({len(self.disagreements)}):")
            for each in sorted(self.disagreements, key=lambda d: (d.function, d.action, d.resource)):
                lines += [
                    f"  {each.function}  {each.action}  on {each.resource}",
                    f"      check: {each.ours}",
                    f"      simulator: {each.theirs}",
                    f"      stack: {each.stack}",
                    f"      test: {each.test}",
                ]
        if self.refused:
            lines.append(f"Requests it could not evaluate ({len(self.refused)}):")
            for what, test in sorted(self.refused.items()):
                lines += [f"  {what}", f"      test: {test}"]
        if self.ok:
            lines.append("it agrees on every request")
        return lines


@dataclass(frozen=True)
class _Case:
    """One distinct request of one function on one stack, with our decision."""

    function: str
    stack_key: str
    request: Request
    decision: Decision
    stack: str
    test: str


def policy_document(statements: Sequence[Resolved]) -> dict[str, Any]:
    """The identity policy our evaluator decides by, as IAM reads one: each statement resolved."""
    written = []
    for resolved in statements:
        statement = resolved.statement
        each: dict[str, Any] = {"Effect": statement.effect}
        if statement.not_actions is not None:
            each["NotAction"] = list(statement.not_actions)
        else:
            each["Action"] = list(statement.actions or ())
        if statement.not_resources is not None:
            each["NotResource"] = list(resolved.not_resources)
        else:
            each["Resource"] = [pattern for pattern, _ in resolved.resources]
        condition: dict[str, dict[str, list[str]]] = {}
        for operator, key, values in resolved.condition:
            condition.setdefault(operator, {})[key] = list(values)
        if condition:
            each["Condition"] = condition
        written.append(each)
    return {"Version": "2012-10-17", "Statement": written}


def _cases(check: Check) -> tuple[dict[tuple[str, str], list[Resolved]], dict[str, _Case]]:
    """Every distinct request the check decided, and the statements of each (function, stack)."""
    roles: dict[tuple[str, str], list[Resolved]] = {}
    cases: dict[str, _Case] = {}
    for record in check.records.calls:
        stack_key = str(record.get("stack"))
        facts = check.records.stacks.get(stack_key)
        if record.get("error") or facts is None:
            continue  # the check reports it as not checked
        function = str(record["function"])
        try:
            statements = roles.setdefault((function, stack_key), check._statements(function, stack_key))
        except PolicyError:
            continue  # likewise
        for data in record["requests"]:
            request = Request.from_json(data)
            key = json.dumps([function, stack_key, request.to_json()], sort_keys=True)
            if key not in cases:
                cases[key] = _Case(
                    function,
                    stack_key,
                    request,
                    decide_request(statements, request),
                    check._stack_text(facts),
                    check.records.test_of(record),
                )
    return roles, cases


def _principal(function: str, account: str) -> str:
    return f"arn:aws:sts::{account}:assumed-role/{function}Role/{function}"


def _account(resource: str, stack_account: str) -> str:
    parts = resource.split(":")
    return parts[4] if len(parts) > 5 and parts[4] else stack_account


def _ours(decision: Decision) -> str:
    if not decision.allowed:
        return f"denied: {decision.reason}"
    grant = decision.grants[0]
    when = f" when {grant.condition}" if grant.condition else ""
    return f"allowed by {grant.action} on {grant.shown_resource}{when}"


def _theirs(answer: Mapping[str, Any], statements: Sequence[Resolved]) -> str:
    judged = []
    for each in answer.get("statements") or ():
        origin = statements[int(each["statement"])].statement.origin
        verdict = "applies" if each["matches"] else "does not apply"
        why = [] if each["resource"] else ["resource does not match"]
        why += [
            f"{c['operator']} {c['key']} "
            + ("holds" if c["matches"] else "fails" + (" (key absent)" if c["missing"] else ""))
            for c in each["conditions"]
        ]
        judged.append(f"{origin} ({each['effect']}) {verdict}" + (f": {', '.join(why)}" if why else ""))
    shown = str(answer["decision"])
    if judged:
        shown += "; " + "; ".join(judged)
    if answer.get("ignored"):
        shown += f"; context keys it set aside: {', '.join(answer['ignored'])}"
    return shown


def consult(check: Check, node: str = "node", simulate: Path | None = None) -> SecondOpinion:
    """The simulator's decision on every distinct request ``check`` decided, compared with ours."""
    opinion = SecondOpinion()
    roles, cases = _cases(check)
    opinion.requests = len(cases)
    if not cases:
        return opinion
    # A role identical on several stacks (or of several functions) is sent once, and a request of it
    # simulated once: our decision, made from the same statements, is the same for each.
    documents: dict[str, str] = {}  # the policy as JSON -> its id in the batch
    policy_ids = {
        key: documents.setdefault(
            json.dumps(policy_document(statements), sort_keys=True), f"p{len(documents)}"
        )
        for key, statements in roles.items()
    }
    ordered = list(cases.values())
    simulations: dict[str, int] = {}  # a simulated request as JSON -> its id in the batch
    requests: list[dict[str, Any]] = []
    simulation_of: list[int] = []  # each case's simulation
    for case in ordered:
        account = check.records.stacks[case.stack_key].account
        simulated = {
            "policy": policy_ids[(case.function, case.stack_key)],
            "principal": _principal(case.function, account),
            "action": case.request.action,
            "resource": case.request.resource,
            "account": _account(case.request.resource, account),
            "context": case.request.to_json()["context"],
        }
        number = simulations.setdefault(json.dumps(simulated, sort_keys=True), len(simulations))
        if number == len(requests):
            requests.append({"id": number, **simulated, "expected": case.decision.allowed})
        simulation_of.append(number)
    batch = {"policies": {id_: json.loads(text) for text, id_ in documents.items()}, "requests": requests}
    opinion.simulated = len(requests)
    began = time.monotonic()
    answer = _run(batch, node, simulate or script(), opinion)
    opinion.seconds = time.monotonic() - began
    if answer is None:
        return opinion
    opinion.simulator = str(answer.get("simulator") or SIMULATOR)
    decisions = {int(each["id"]): each for each in answer.get("decisions") or ()}
    answered = len(decisions.keys() & set(range(len(requests))))
    if answered < len(requests):
        opinion.error = f"it answered for {answered} of {len(requests)} requests"
        return opinion
    for number, case in zip(simulation_of, ordered, strict=True):
        decided = decisions[number]
        what = f"{case.function}  {case.request.action}  on {case.request.resource}"
        if "error" in decided:
            opinion.refused.setdefault(f"{what}: {decided['error']}", case.test)
            continue
        if (decided["decision"] == "Allowed") != case.decision.allowed:
            statements = roles[(case.function, case.stack_key)]
            opinion.disagreements.append(
                Disagreement(
                    case.function,
                    case.request.action,
                    case.request.resource,
                    _ours(case.decision),
                    _theirs(decided, statements),
                    case.stack,
                    case.test,
                )
            )
    return opinion


def _run(
    batch: Mapping[str, Any], node: str, simulate: Path, opinion: SecondOpinion
) -> dict[str, Any] | None:
    """The simulator's answer to ``batch``; None, with ``opinion.error`` saying why, when there is none."""
    with tempfile.TemporaryDirectory(prefix="phoneid-second-opinion-") as directory:
        path = Path(directory) / "batch.json"
        path.write_text(json.dumps(batch))
        try:
            done = subprocess.run(  # noqa: S603 - node, on our own script and batch
                [node, str(simulate), str(path)],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except FileNotFoundError:
            opinion.error = (
                f"{node!r} was not found: the second opinion runs {SIMULATOR} in Node.js "
                "(install Node.js 20, then `npm ci` in the repository)"
            )
            return None
        except subprocess.TimeoutExpired:
            opinion.error = f"{simulate} took more than {TIMEOUT_SECONDS} s"
            return None
    if done.returncode != 0:
        said = "\n        ".join(done.stderr.strip().splitlines()[-8:]) or "(nothing on stderr)"
        opinion.error = (
            f"{node} {simulate} failed (exit status {done.returncode}; is {SIMULATOR} installed? "
            f"`npm ci`):\n        {said}"
        )
        return None
    try:
        answer = json.loads(done.stdout)
    except json.JSONDecodeError:
        opinion.error = f"{simulate} printed no JSON: {done.stdout[:200]!r}"
        return None
    if not isinstance(answer, dict):
        opinion.error = f"{simulate} printed no decisions: {done.stdout[:200]!r}"
        return None
    return answer
