"""The tables of the docs generated from the code (tests/contract/test_template.py compares them):
the default fraud policy (docs/fraud-policy.md) and the Sandbox users (docs/sandbox.md)."""

from __future__ import annotations


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
