"""What ``make mutation`` mutates (tools/mutation.py): the operators whose mutants run, and each
target's module, the functions in it that hold the rules, and the tests that cover them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CORE = "layers/core/phoneid"

# Which mutants run. Of the comparison and arithmetic operators, those that move a limit by one or
# negate it (``<`` to ``<=`` and ``>=``, ``==`` to ``!=``, ``is`` to ``is not``, ``+`` to ``-``, ``*``
# to ``/``); the others (``<`` to ``==``, ``+`` to ``%``, ...) are left out, as selective mutation
# does, to keep a run within minutes on two CPUs (docs/mutation.md, "Which mutants"). Never: bitwise
# and power operators (the rules have none; ``X | None`` in an annotation is never evaluated), and
# the variable replacer and inserter (random names).
_KEPT_PAIRS = [
    "Lt_LtE",
    "Lt_GtE",
    "LtE_Lt",
    "LtE_Gt",
    "Gt_GtE",
    "Gt_LtE",
    "GtE_Gt",
    "GtE_Lt",
    "Eq_NotEq",
    "NotEq_Eq",
    "In_NotIn",
    "NotIn_In",
    "Is_IsNot",
    "IsNot_Is",
    "Add_Sub",
    "Sub_Add",
    "Mul_Div",
    "Div_Mul",
    "FloorDiv_Mul",
    "Mod_Mul",
]
KEPT_OPERATORS = re.compile(
    r"core/Replace(ComparisonOperator|BinaryOperator)_(" + "|".join(_KEPT_PAIRS) + r")$"
    r"|core/(?!Replace(ComparisonOperator|BinaryOperator)_|Variable(Replacer|Inserter)$)\w+$"
)


@dataclass(frozen=True)
class Target:
    name: str
    module: str  # under layers/core/phoneid
    tests: tuple[str, ...]
    # Qualified names (``Class.method``) of the functions, and names of the module's constants,
    # mutated; empty: the whole module.
    functions: tuple[str, ...] = ()
    # Unit tests that need none of tests/conftest.py's fixtures run without it (moto and the local
    # stack's imports are most of a run's time).
    conftest: bool = False
    # A pytest -k expression: only the tests of these rules in a file that tests more.
    select: str = ""
    why: str = field(default="", compare=False)


TARGETS = (
    Target(
        "token-windows",
        "domain/token_keys.py",
        ("tests/unit/test_tokens.py", "tests/unit/test_token_windows.py"),
        why="a token key's window, its edges and the clock skew",
    ),
    Target(
        "token-checks",
        "domain/tokens.py",
        ("tests/unit/test_tokens.py", "tests/unit/test_token_windows.py"),
        functions=(
            "ACCESS_TOKEN_LIFETIME",
            "ALLOWED_ALGORITHMS",
            "REQUIRED_CLAIMS",
            "CLOCK_SKEW",
            "claims_for",
            "verify",
        ),
        why="a JWT's signature, algorithm, issuer, audience, use, expiry, issue time and lifetime",
    ),
    Target(
        "token-keys",
        "services/token_keys.py",
        ("tests/integration/test_token_keys.py", "tests/integration/test_token_key_edges.py"),
        functions=(
            "TokenKeyRotation.run",
            "WindowSigningKeys._current",
            "PublishedTokenKeys.verification_key",
            "PublishedTokenKeys._fresh",
        ),
        conftest=True,
        why="which keys sign and verify when, and how long a replaced key is still read",
    ),
    Target(
        "authorizers",
        "services/tokens.py",
        ("tests/unit/test_token_service.py", "tests/unit/test_flow_authorizer.py"),
        functions=("TokenService.authorize", "TokenService.authorize_flow", "TokenService._usable"),
        why="the authorizers' checks: bearer syntax, token kind, lifetime cap, the client's state",
    ),
    Target(
        "body-limit",
        "api/http.py",
        ("tests/unit/test_body_limit.py",),
        functions=("MAX_BODY_BYTES", "_byte_size", "_check_json_body", "parse_form"),
        why="the 4,096-byte body limit, in bytes, and the JSON and form bodies the edge reads",
    ),
    Target(
        "idempotency",
        "domain/idempotency.py",
        ("tests/unit/test_idempotency.py", "tests/unit/test_idempotency_edges.py"),
        why="Idempotency-Key: its syntax, scope, lease, lifetime, and which answers are kept",
    ),
    Target(
        "page-keys",
        "services/page_keys.py",
        ("tests/unit/test_page_keys.py",),
        why="list page keys (ADR 0023): MACed, bound to the client, one spelling only",
    ),
    Target(
        "webhook-urls",
        "domain/webhooks.py",
        ("tests/unit/test_webhooks.py", "tests/unit/test_webhook_url_edges.py"),
        select="urls or address or loopback_receivers or allows_loopback or logged_without or url_edges",
        functions=(
            "address_refusal",
            "_embedded_ipv4",
            "_host_refusal",
            "_is_ip",
            "_is_loopback_host",
            "check_url",
        ),
        why="webhook URL rules (ADR 0066): https, no credentials, no private or internal address",
    ),
    Target(
        "ratelimit",
        "services/ratelimit.py",
        ("tests/unit/test_ratelimit.py", "tests/unit/test_rate_limit_edges.py"),
        functions=("REQUESTS_PER_SECOND", "_WINDOW_TTL_SECONDS", "RateLimit.check"),
        why="25 requests a second per client, in fixed one-second windows",
    ),
    Target(
        "possession",
        "domain/possession.py",
        ("tests/unit/test_possession_engine.py", "tests/unit/test_possession_rules.py"),
        functions=(
            "OTP_LIFETIME",
            "LINK_LIFETIME",
            "MAX_SENDS",
            "MAX_OTP_ENTRIES_WITH_RETRY",
            "MAX_NUMBERS",
            "PossessionState.decided",
            "PossessionState.require_pending",
            "Rules.max_entries",
            "before_send",
            "otp_entered",
            "link_selected",
            "entries_left",
            "sends_left",
        ),
        why="OTP entries, messages sent, numbers entered, the code's and the link's lifetimes",
    ),
    Target(
        "connect-rows",
        "domain/connect/stats.py",
        ("tests/unit/test_connect_stats.py",),
        why="Connect's row accounting: rows read, valid, rejected by code, verified, failed, not processed",
    ),
)
