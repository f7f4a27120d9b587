"""Connect: clients onboarded (their profile, their SFTP user or upload URLs) and the batch
workflow's service, which verifies a file's rows as ``/v3/verify`` verifies one item."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.flows import Flows

if TYPE_CHECKING:
    from phoneid.ports import Mailer, ObjectStore
    from phoneid.services.connect import ConnectBatches
    from phoneid.services.connect_onboarding import ConnectOnboarding, PresignedUrls, SftpUsers


class Connect(Flows):
    @cached_property
    def objects(self) -> ObjectStore:
        """The Connect bucket."""
        from phoneid.adapters.s3 import S3ObjectStore

        return S3ObjectStore(self.s3, self.settings.connect_bucket)

    @cached_property
    def mailer(self) -> Mailer:
        from phoneid.adapters.ses import SesMailer

        return SesMailer(self.ses, self.settings.connect_email_sender)

    # --- onboarding ----------------------------------------------------------------------------

    @cached_property
    def sftp_users(self) -> SftpUsers | None:
        """Transfer Family users: only the operator's CLI against a deployed stack gives them
        (``override(sftp_users=...)``); the local SFTP server reads the profiles instead."""
        return None

    @cached_property
    def presigned_urls(self) -> PresignedUrls:
        """URLs of the Connect bucket signed with this process's credentials (the operator's CLI)."""
        from phoneid.adapters.s3_urls import S3PresignedUrls, signing_client

        return S3PresignedUrls(signing_client(), self.settings.connect_bucket)

    @cached_property
    def connect_onboarding(self) -> ConnectOnboarding:
        from phoneid.domain.connect import ConnectTransport
        from phoneid.services.connect_onboarding import ConnectOnboarding

        transport = self.settings.connect_transport
        return ConnectOnboarding(
            self.connect_profiles,
            self.clients,
            self.clock,
            transfer=self.sftp_users,
            transport=transport,
            urls=self.presigned_urls if transport is ConnectTransport.S3 else None,
        )

    # --- batches (the workflow's steps) ----------------------------------------------------------

    @cached_property
    def connect(self) -> ConnectBatches:
        """A batch row is verified exactly as ``/v3/verify`` verifies one item (same service, policy)."""
        from phoneid.services.connect import ConnectBatches

        return ConnectBatches(
            objects=self.objects,
            states=self.batch_states,
            profiles=self.connect_profiles,
            mailer=self.mailer,
            clients=self.clients,
            verify=self.verify.verify_many,
            decisions=self.decision_log,
            clock=self.clock,
            region=self.settings.region,
            operator_emails=self.settings.operator_emails,
        )
