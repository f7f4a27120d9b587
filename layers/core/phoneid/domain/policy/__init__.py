"""The fraud policy as data: rules from signals to reason codes, windows, source timeouts and the
assurance levels. ``phoneid/policy/default.yaml`` is the default; an operator may give a client its
own document of the same shape. Every document is validated on load; errors name the bad entry.

- ``signals``: what a rule may test, and where each signal comes from;
- ``conditions``: one signal's tests, and the bounded observations they compare with;
- ``rules``: a rule, its action and flows, and the plain form ``evaluate`` runs;
- ``assurance``: the assurance levels and their reasons;
- ``document``: the whole document (windows, sources, rules, levels), what each flow asks of it,
  and ``parse_policy``;
- ``strict``: the base of every entry (unknown keys refused, never changed in place).
"""

from phoneid.domain.policy.assurance import AssuranceLevel, Level, Reason
from phoneid.domain.policy.conditions import Bounds, Condition, Scalar
from phoneid.domain.policy.document import InvalidPolicy, Policy, SourceName, Sources, Windows, parse_policy
from phoneid.domain.policy.rules import ALL_FLOWS, Action, Flow, OnSourceFailure, Rule, RuleCheck
from phoneid.domain.policy.signals import SIGNAL_SOURCES, Signal

__all__ = [
    "ALL_FLOWS",
    "SIGNAL_SOURCES",
    "Action",
    "AssuranceLevel",
    "Bounds",
    "Condition",
    "Flow",
    "InvalidPolicy",
    "Level",
    "OnSourceFailure",
    "Policy",
    "Reason",
    "Rule",
    "RuleCheck",
    "Scalar",
    "Signal",
    "SourceName",
    "Sources",
    "Windows",
    "parse_policy",
]
