"""The fraud signals a verification gathers, and the clients' policies that judge them."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.carrier import Carrier
from phoneid.wiring.stores import Stores

if TYPE_CHECKING:
    from phoneid.services.policies import PolicyBook
    from phoneid.services.signals import Gatherer


class Signals(Stores, Carrier):
    @cached_property
    def signals(self) -> Gatherer:
        """Sandbox scripts each test user's signals; production asks every source the policy needs."""
        from phoneid.services.signals import ScriptedSignals, SignalGatherer, SignalSources

        if self.catalogue is not None:
            return ScriptedSignals(self.catalogue)
        sources = SignalSources(
            lists=self.signal_lists,
            activity=self.activity_log,
            change_events=self.change_events,
            history=self.enrollment_store,
            identities=self.identities,
            mac=self.code_mac,
            sim_swap=self.sim_swap,
            call_forwarding=self.call_forwarding,
            tenure=self.tenure,
            recycling=self.number_recycling,
            kyc=self.kyc_match,
            device_status=self.device_status,
        )
        return SignalGatherer(sources, self.clock)

    @cached_property
    def policies(self) -> PolicyBook:
        from phoneid.services.policies import PolicyBook

        return PolicyBook(self.clients, self.clock)
