"""Webhook URL rules (ADR 0066) at their edges (docs/mutation.md): a name is judged by its last label,
a host name's length, and http allowed on the local stack for loopback hosts only."""

from __future__ import annotations

import pytest

from phoneid.domain.webhooks import MAX_URL_LENGTH, InvalidWebhookUrl, address_refusal, check_url


@pytest.mark.parametrize(
    "url", ["https://1.example.com/", "https://10.hooks.example.com/", "https://0x7f.example.com/"]
)
def test_a_name_whose_first_label_is_a_number_is_a_host_name(url: str) -> None:
    assert check_url(url) == url


@pytest.mark.parametrize("url", ["https://hooks.123/", "https://example.0x7f/"])
def test_a_name_whose_last_label_is_a_number_is_read_as_an_address_and_refused(url: str) -> None:
    with pytest.raises(InvalidWebhookUrl, match="four decimal numbers"):
        check_url(url)


def host_of(length: int) -> str:
    """A public host name of exactly ``length`` characters, in labels of up to 63."""
    labels, left = [], length - len(".com")
    while left > 0:
        size = min(63, left)
        labels.append("a" * size)
        left -= size + 1
        if left == 0:  # a label of one more character would leave an empty one: shorten this
            labels[-1] = labels[-1][:-2]
            labels.append("b")
    name = ".".join(labels) + ".com"
    assert len(name) == length, len(name)
    return name


def test_a_host_name_of_253_characters_is_accepted_and_254_refused() -> None:
    assert check_url(f"https://{host_of(253)}/") == f"https://{host_of(253)}/"
    with pytest.raises(InvalidWebhookUrl, match="not a host name"):
        check_url(f"https://{host_of(254)}/")


@pytest.mark.parametrize(
    "url", ["http://hooks.example.com/", "http://93.184.216.34/", "http://[2606:2800:220:1::1]/"]
)
def test_the_local_stack_takes_http_for_loopback_hosts_only(url: str) -> None:
    with pytest.raises(InvalidWebhookUrl, match="must use https"):
        check_url(url, allow_loopback=True)


@pytest.mark.parametrize("url", ["https://10.0.0.5/", "https://[fd00::1]/", "https://[::ffff:10.0.0.5]/"])
def test_the_local_stack_refuses_private_addresses_as_a_deployed_one_does(url: str) -> None:
    with pytest.raises(InvalidWebhookUrl, match="private"):
        check_url(url, allow_loopback=True)


def test_a_url_of_the_longest_length_is_accepted_and_one_character_more_refused() -> None:
    base = "https://hooks.example.com/"
    longest = base + "a" * (MAX_URL_LENGTH - len(base))
    assert check_url(longest) == longest
    with pytest.raises(InvalidWebhookUrl, match=f"1 to {MAX_URL_LENGTH} characters"):
        check_url(longest + "a")


def test_a_nat64_address_is_judged_by_every_bit_of_the_ipv4_address_it_carries() -> None:
    # 169.254.169.255 is link-local; one bit less, 169.254.169.254, is the metadata address
    assert address_refusal("64:ff9b::a9fe:a9ff") == "a link-local address, in an IPv6 form"
    assert address_refusal("64:ff9b::a9fe:a9fe") == "the cloud instance metadata address, in an IPv6 form"
