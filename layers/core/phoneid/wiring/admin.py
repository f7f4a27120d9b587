"""What the operator runs (``phoneid`` CLI): API clients, identity records and signal lists imported."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.stores import Stores

if TYPE_CHECKING:
    from phoneid.services.clients import ClientAdmin
    from phoneid.services.identities import IdentityImport
    from phoneid.services.signal_lists import SignalListImport


class Admin(Stores):
    @cached_property
    def client_admin(self) -> ClientAdmin:
        from phoneid.services.clients import ClientAdmin

        return ClientAdmin(
            self.clients,
            self.clock,
            self.settings.tier,
            self.settings.region,
            cipher=self.cipher,
            loopback_webhooks=self.settings.local_stack,
        )

    @cached_property
    def identity_import(self) -> IdentityImport:
        from phoneid.services.identities import IdentityImport

        return IdentityImport(self.identity_store, self.settings.region)

    @cached_property
    def signal_list_import(self) -> SignalListImport:
        from phoneid.services.signal_lists import SignalListImport

        return SignalListImport(self.signal_lists, self.code_mac, self.settings.region)
