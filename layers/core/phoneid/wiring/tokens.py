"""Access tokens: the signing keys of each window (sealed by KMS), who signs and verifies with them,
and the token endpoint's service."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.stores import Stores

if TYPE_CHECKING:
    from phoneid.domain.tokens import Audience
    from phoneid.ports import KeySealer, SigningKeyMaker, TokenSigner, VerificationKeys
    from phoneid.services.token_keys import TokenKeyRotation
    from phoneid.services.tokens import TokenService


class Tokens(Stores):
    @cached_property
    def key_sealer(self) -> KeySealer:
        from phoneid.adapters.kms import KmsKeySealer

        return KmsKeySealer(self.kms, self.settings.token_signing_key_id)

    @cached_property
    def signing_key_maker(self) -> SigningKeyMaker:
        from phoneid.adapters.es256 import Es256Keys

        return Es256Keys()

    @cached_property
    def signer(self) -> TokenSigner:
        from phoneid.adapters.lambda_invoke import LambdaRotationTrigger
        from phoneid.services.token_keys import WindowSigningKeys

        trigger = LambdaRotationTrigger(self.lambda_client, self.settings.token_keys_function)
        return WindowSigningKeys(
            self.token_key_store, self.key_sealer, self.signing_key_maker, trigger, self.clock
        )

    @cached_property
    def verification_keys(self) -> VerificationKeys:
        from phoneid.services.token_keys import PublishedTokenKeys

        return PublishedTokenKeys(self.token_key_store, self.clock)

    @cached_property
    def token_key_rotation(self) -> TokenKeyRotation:
        from phoneid.services.token_keys import TokenKeyRotation

        return TokenKeyRotation(self.token_key_store, self.key_sealer, self.signing_key_maker, self.clock)

    @cached_property
    def audience(self) -> Audience:
        from phoneid.domain.tokens import Audience

        return Audience(self.settings.tier, self.settings.region)

    @cached_property
    def tokens(self) -> TokenService:
        from phoneid.services.tokens import TokenService

        return TokenService(
            clients=self.clients,
            refresh_tokens=self.refresh_tokens,
            signer=self.signer,
            keys=self.verification_keys,
            clock=self.clock,
            audience=self.audience,
        )
