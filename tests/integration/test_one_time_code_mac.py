"""One-time codes are MACed under a key derived once per instance (moto's KMS): a code's send and
its entry make no KMS call of their own, and a MAC KMS made before the change still checks."""

from __future__ import annotations

from typing import Any

import pytest

from phoneid.adapters.kms import DerivedKeyMac, KmsCodeMac, OneTimeCodeMac
from tests.harness import Api, kms_calls


@pytest.fixture
def macs(api: Api) -> tuple[Any, KmsCodeMac, OneTimeCodeMac]:
    kms, key_id = api.container.kms, api.container.settings.otp_mac_key_id
    in_kms = KmsCodeMac(kms, key_id)
    return kms, in_kms, OneTimeCodeMac(DerivedKeyMac(kms, key_id, purpose="one-time-code"), in_kms)


def test_an_instance_asks_kms_once_for_all_the_codes_it_macs_and_checks(
    macs: tuple[Any, KmsCodeMac, OneTimeCodeMac],
) -> None:
    kms, _, codes = macs
    calls = kms_calls(kms)

    # When three flows' codes are MACed and each is entered right and wrong
    stored = {n: codes.digest(f"flow-{n}:1:12345{n}") for n in range(3)}
    right = [codes.matches(f"flow-{n}:1:12345{n}", stored[n]) for n in range(3)]
    wrong = [codes.matches(f"flow-{n}:1:999999", stored[n]) for n in range(3)]

    # Then the right codes match, the wrong ones do not, and KMS was asked once, for the key
    assert right == [True, True, True]
    assert wrong == [False, False, False]
    assert calls == {"GenerateMac": 1}
    # And only a MAC is kept, which says which key made it
    assert all(digest.startswith("d1:") and "123450" not in digest for digest in stored.values())


def test_a_code_is_bound_to_its_flow_and_send(macs: tuple[Any, KmsCodeMac, OneTimeCodeMac]) -> None:
    _, _, codes = macs
    stored = codes.digest("flow-a:1:123456")

    assert codes.matches("flow-a:1:123456", stored)
    assert not codes.matches("flow-b:1:123456", stored)  # another flow
    assert not codes.matches("flow-a:2:123456", stored)  # the send before a resend


def test_a_code_kms_macced_before_the_change_is_still_checked_by_kms(
    macs: tuple[Any, KmsCodeMac, OneTimeCodeMac],
) -> None:
    kms, in_kms, codes = macs
    sent_before = in_kms.digest("flow-a:1:123456")
    calls = kms_calls(kms)

    assert codes.matches("flow-a:1:123456", sent_before)
    assert not codes.matches("flow-a:1:654321", sent_before)
    assert calls == {"VerifyMac": 2}


def test_another_purpose_gets_another_key(api: Api) -> None:
    kms, key_id = api.container.kms, api.container.settings.otp_mac_key_id
    codes = DerivedKeyMac(kms, key_id, purpose="one-time-code")
    aliases = DerivedKeyMac(kms, key_id, purpose="phone-alias")

    assert codes.digest("flow-a:1:123456") != aliases.digest("flow-a:1:123456")
