"""Gathering the fraud policy's signals for one request: every source the policy needs, at once.

Each source runs in a thread of its own with the policy's timeout for its kind; a source that fails
or is too slow gives ``SOURCE_FAILED`` for its signals, and the policy says whether that fails the
request (fail closed) or is skipped. Gathering ends by the policy's deadline whatever the sources do,
well inside API Gateway's 29 seconds.

- ``subject``: what one evaluation is about, and what the flow itself knows;
- ``request``: the ports behind the signals, and one gathering's shared reads;
- ``source``: what a source is (its signals, its timeout kind, the port it needs);
- ``carrier_sources``, ``list_sources``, ``record_sources``: the twelve sources;
- ``derived``: signals computed from others;
- ``gathering``: the production gatherer and its pool;
- ``sandbox``: Sandbox test users' scripted signals.
"""

from phoneid.services.signals.gathering import SignalGatherer
from phoneid.services.signals.request import SignalSources
from phoneid.services.signals.sandbox import SANDBOX_DEFAULTS, ScriptedSignals
from phoneid.services.signals.subject import Gatherer, Subject, flow_observations

__all__ = [
    "SANDBOX_DEFAULTS",
    "Gatherer",
    "ScriptedSignals",
    "SignalGatherer",
    "SignalSources",
    "Subject",
    "flow_observations",
]
