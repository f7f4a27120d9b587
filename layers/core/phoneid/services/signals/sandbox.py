"""Sandbox: each test user's signals are scripted in the catalogue; the same policy evaluates them,
so every reason code can be seen without configuring anything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phoneid.domain.policy import Policy, Signal
from phoneid.domain.sandbox import Catalogue
from phoneid.services.signals.derived import derived, with_inputs
from phoneid.services.signals.subject import Subject, flow_observations

# What a Sandbox test user's sources say unless the user's script says otherwise: nothing notable.
SANDBOX_DEFAULTS: Mapping[Signal, Any] = {
    Signal.SIM_SWAP_HOURS_AGO: None,
    Signal.CALL_FORWARDING: False,
    Signal.TENURE_DAYS: 3650,
    Signal.NUMBER_RECYCLED: False,
    Signal.KYC_ELEMENTS_SUPPLIED: 0,
    Signal.KYC_ELEMENTS_UNCONFIRMED: 0,
    Signal.SECONDARY_SOURCE_MISMATCHES: 0,
    Signal.NETWORK_REACHABLE: True,
    Signal.LINE_TYPE: "mobile",
    Signal.LINE_TYPE_REGISTRY: None,
    Signal.PUBLIC_SMS: False,
    Signal.SIM_TRUST_SCORE: 90,
    Signal.PORT_HOURS_AGO: None,
    Signal.BOT_LINKED: False,
    Signal.AML_LISTED: False,
    Signal.SSN_ISSUED_BEFORE_BIRTH: False,
    Signal.CLAIMED_ADDRESS_CORRECTIONAL: False,
    Signal.NUMBER_ADDRESS_CORRECTIONAL: False,
    Signal.IDENTITY_DECEASED: False,
    Signal.NUMBER_OWNER_DECEASED: False,
    Signal.IDENTITIES_ON_NUMBER: 1,
    Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER: 0,
    Signal.DISCONNECT_SINCE_ASSOCIATION: False,
    Signal.NUMBER_CHANGE_EVENTS: 0,
    Signal.PRIOR_ACTIVITY: 12,
    Signal.RECENT_CHECKS: 0,
    Signal.RECENT_CHECKS_SHARING_ATTRIBUTES: 0,
    Signal.ACTIVE_IDENTITY: True,
}


class ScriptedSignals:
    """Sandbox: each test user's signals are scripted in the catalogue; the same policy evaluates them,
    so every reason code can be seen without configuring anything."""

    def __init__(self, catalogue: Catalogue) -> None:
        self._catalogue = catalogue

    def gather(self, subject: Subject, policy: Policy) -> dict[Signal, Any]:
        observed = flow_observations(subject)
        if not subject.ask_sources:
            return observed
        user = self._catalogue.find(subject.phone_number)
        script = user.observations if user else {}
        needed = policy.needed_signals(subject.flow)
        for signal in with_inputs(needed) - set(observed):
            if signal in SANDBOX_DEFAULTS:
                observed[signal] = SANDBOX_DEFAULTS[signal]
        # The script speaks for the user's sources, and for the identity records too.
        observed |= {s: v for s, v in script.items() if s not in (Signal.POSSESSION, Signal.KEY_MISMATCH)}
        observed |= derived(observed, needed)
        return observed
