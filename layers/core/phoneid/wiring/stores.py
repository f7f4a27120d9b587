"""The DynamoDB tables' stores (``phoneid.adapters.dynamodb``), one per table and port, and where a
stack reads its identities from."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.keys import Keys

if TYPE_CHECKING:
    from phoneid.adapters.dynamodb.device_keys import DynamoDeviceKeyStore
    from phoneid.ports import (
        ActivityLog,
        BatchStates,
        ChangeEventLog,
        ClientStore,
        ConnectProfiles,
        DecisionStore,
        EnrollmentStore,
        IdempotencyStore,
        IdentitySource,
        IdentityStore,
        MonitorStateStore,
        RateLimiter,
        RefreshTokenStore,
        SessionStore,
        SignalLists,
        TokenKeyStore,
    )
    from phoneid.services.history import DecisionSequencer
    from phoneid.services.idempotency import IdempotentRequests


class Stores(Keys):
    @cached_property
    def decision_store(self) -> DecisionStore:
        from datetime import timedelta

        from phoneid.adapters.dynamodb.decisions import DynamoDecisionStore

        retention = timedelta(days=self.settings.decision_retention_days)
        return DynamoDecisionStore(self.dynamodb, self.settings.decisions_table, self.cipher, retention)

    @cached_property
    def decision_sequencer(self) -> DecisionSequencer:
        from phoneid.adapters.dynamodb.decision_stream import DynamoDecisionStream
        from phoneid.adapters.dynamodb.history import DynamoHistoryStore
        from phoneid.services.history import DecisionSequencer

        stream = DynamoDecisionStream(self.dynamodb_streams, self.settings.decisions_stream)
        return DecisionSequencer(
            stream, DynamoHistoryStore(self.dynamodb, self.settings.decision_history_table, self.clock)
        )

    @cached_property
    def sessions(self) -> SessionStore:
        from phoneid.adapters.dynamodb.sessions import DynamoSessionStore

        return DynamoSessionStore(self.dynamodb, self.settings.sessions_table, self.cipher, self.device_keys)

    @cached_property
    def device_keys(self) -> DynamoDeviceKeyStore:
        """Also where the session store binds keys, in the transaction that changes the session."""
        from phoneid.adapters.dynamodb.device_keys import DynamoDeviceKeyStore

        return DynamoDeviceKeyStore(self.dynamodb, self.settings.device_keys_table)

    @cached_property
    def clients(self) -> ClientStore:
        from phoneid.adapters.dynamodb.clients import DynamoClientStore

        return DynamoClientStore(self.dynamodb, self.settings.clients_table)

    @cached_property
    def refresh_tokens(self) -> RefreshTokenStore:
        from phoneid.adapters.dynamodb.refresh_tokens import DynamoRefreshTokenStore

        return DynamoRefreshTokenStore(self.dynamodb, self.settings.refresh_tokens_table)

    @cached_property
    def rate_limiter(self) -> RateLimiter:
        from phoneid.adapters.dynamodb.rate_limits import DynamoRateLimiter

        return DynamoRateLimiter(self.dynamodb, self.settings.rate_limits_table)

    @cached_property
    def token_key_store(self) -> TokenKeyStore:
        from phoneid.adapters.dynamodb.token_keys import DynamoTokenKeyStore

        return DynamoTokenKeyStore(self.dynamodb, self.settings.token_keys_table)

    @cached_property
    def idempotency_store(self) -> IdempotencyStore:
        from phoneid.adapters.dynamodb.idempotency import DynamoIdempotencyStore

        if not self.settings.idempotency_table:
            raise RuntimeError(
                "IDEMPOTENCY_TABLE is not set: only the routes honouring Idempotency-Key have it"
            )
        return DynamoIdempotencyStore(self.dynamodb, self.settings.idempotency_table)

    @cached_property
    def idempotency(self) -> IdempotentRequests:
        """Requests under an Idempotency-Key; their answers sealed under the PII key."""
        from phoneid.services.idempotency import IdempotentRequests

        return IdempotentRequests(self.idempotency_store, self.cipher, self.clock)

    # --- identities: the operator's records, and Identity Manager's --------------------------

    @cached_property
    def identity_store(self) -> IdentityStore:
        from phoneid.adapters.dynamodb.identities import DynamoIdentityStore

        return DynamoIdentityStore(self.dynamodb, self.settings.identities_table, self.cipher)

    @cached_property
    def identities(self) -> IdentitySource:
        """Sandbox stacks read the test-user catalogue; production reads the operator's identity table."""
        from phoneid.adapters.sandbox import CatalogueIdentitySource

        if self.catalogue is not None:
            return CatalogueIdentitySource(self.catalogue)
        return self.identity_store

    @cached_property
    def enrollment_store(self) -> EnrollmentStore:
        """Identity Manager's identities; also the numbers' history for the fraud policy."""
        from phoneid.adapters.dynamodb.enrollments.store import DynamoEnrollmentStore

        return DynamoEnrollmentStore(self.dynamodb, self.settings.enrollments_table, self.cipher)

    @cached_property
    def monitor_states(self) -> MonitorStateStore:
        """Kept on the identities' own items, in the enrollment table."""
        from phoneid.adapters.dynamodb.enrollments.monitor_states import DynamoMonitorStates

        return DynamoMonitorStates(self.dynamodb, self.settings.enrollments_table)

    # --- the operator's lists and PhoneID's own records of checks and change events -------------

    @cached_property
    def signal_lists(self) -> SignalLists:
        from phoneid.adapters.dynamodb.lists import DynamoSignalLists

        return DynamoSignalLists(self.dynamodb, self.settings.signal_lists_table)

    @cached_property
    def activity_log(self) -> ActivityLog:
        from phoneid.adapters.dynamodb.activity import DynamoActivityLog

        return DynamoActivityLog(self.dynamodb, self.settings.activity_table, self.clock)

    @cached_property
    def change_events(self) -> ChangeEventLog:
        from phoneid.adapters.dynamodb.activity import DynamoChangeEventLog

        return DynamoChangeEventLog(self.dynamodb, self.settings.activity_table, self.clock)

    # --- Connect --------------------------------------------------------------------------------

    @cached_property
    def connect_profiles(self) -> ConnectProfiles:
        from phoneid.adapters.dynamodb.connect_profiles import DynamoConnectProfiles

        return DynamoConnectProfiles(self.dynamodb, self.settings.connect_profiles_table)

    @cached_property
    def batch_states(self) -> BatchStates:
        from phoneid.adapters.dynamodb.connect_batches import DynamoBatchStates

        return DynamoBatchStates(self.dynamodb, self.settings.connect_batches_table)
