"""The KMS keys' uses: PII sealed, one-time codes, list entries, phone aliases and page keys MACed."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.aws import AwsClients

if TYPE_CHECKING:
    from phoneid.ports import CodeMac, KeyedDigest, PiiCipher


class Keys(AwsClients):
    @cached_property
    def cipher(self) -> PiiCipher:
        from phoneid.adapters.kms import KmsPiiCipher

        return KmsPiiCipher(self.kms, self.settings.pii_key_id)

    @cached_property
    def code_mac(self) -> CodeMac:
        from phoneid.adapters.kms import KmsCodeMac

        return KmsCodeMac(self.kms, self.settings.otp_mac_key_id)

    @cached_property
    def otp_mac(self) -> CodeMac:
        """Each code is MACed twice (sent, entered): under a key derived once per instance."""
        from phoneid.adapters.kms import DerivedKeyMac, OneTimeCodeMac

        derived = DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose="one-time-code")
        return OneTimeCodeMac(derived, self.code_mac)  # codes KMS MACed before are checked by KMS

    @cached_property
    def alias_mac(self) -> KeyedDigest:
        """Phone aliases are computed per verified row, so locally under a key derived once."""
        from phoneid.adapters.kms import DerivedKeyMac

        return DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose="phone-alias")

    @cached_property
    def page_key_mac(self) -> KeyedDigest:
        """List page keys are MACed locally under a key derived once, on the first page that needs
        one (a listing that fits one page calls no KMS)."""
        from phoneid.adapters.kms import DerivedKeyMac
        from phoneid.services.page_keys import PURPOSE

        return DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose=PURPOSE)

    @cached_property
    def decision_mac(self) -> KeyedDigest:
        """Decision records' numbers and request ids, MACed per record under a key derived once."""
        from phoneid.adapters.kms import DerivedKeyMac

        return DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose="decision-record")
