"""A throttled upstream, from the provider's error to the Connect chunk retried: the adapters mark
what they translate from a throttling provider error (botocore's throttling codes, HTTP 429), and a
verification counts as throttled when an error in its chain is so marked."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from botocore.exceptions import ClientError

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.camara import OperatorConfig
from phoneid.adapters.camara_signals import CamaraNetworkClient
from phoneid.adapters.dynamodb.batch_io import source_errors
from phoneid.domain.connect.errors import is_throttling
from phoneid.domain.errors import InternalError, PhoneIdError
from phoneid.domain.signals import SignalSourceError


def throttled_client_error(code: str = "ThrottlingException") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "Rate exceeded"}}, "Query")


def translated(translate: Callable[[str], AbstractContextManager[None]], cause: Exception) -> Exception:
    """What an adapter raises when its provider call fails with ``cause``."""
    try:
        with translate("Query"):
            raise cause
    except Exception as error:
        return error
    raise AssertionError("the adapter let the call succeed")


def raised_from(error: Exception, cause: Exception) -> Exception:
    try:
        raise error from cause
    except Exception as chained:
        return chained


def test_throttling_is_found_in_the_chain_of_a_translated_error() -> None:
    # Given adapters' errors raised from a throttled provider call, and from other failures
    throttled = translated(provider_errors, throttled_client_error())
    slow = translated(source_errors, throttled_client_error("ProvisionedThroughputExceededException"))
    too_many = translated(
        provider_errors,
        ClientError({"Error": {"Code": "Busy"}, "ResponseMetadata": {"HTTPStatusCode": 429}}, "Query"),
    )
    denied = translated(provider_errors, throttled_client_error("AccessDeniedException"))
    refused_read = translated(source_errors, throttled_client_error("ResourceNotFoundException"))
    marked = SignalSourceError("HTTP 429")
    marked.throttled = True
    failed_request = raised_from(PhoneIdError("the request failed"), throttled)

    # When classified / Then only throttling counts, wherever it is in the chain
    assert isinstance(throttled, InternalError)
    assert isinstance(slow, SignalSourceError)
    assert is_throttling(throttled)
    assert is_throttling(slow)
    assert is_throttling(too_many)
    assert is_throttling(marked)
    assert is_throttling(failed_request)
    assert not is_throttling(denied)
    assert not is_throttling(refused_read)
    assert not is_throttling(InternalError())


def test_camara_credentials_throttled_at_secrets_manager_are_a_throttled_source() -> None:
    # Given an operator whose credentials cannot be read: Secrets Manager throttles, or refuses
    def throttled_config() -> OperatorConfig:
        raise throttled_client_error()

    def denied_config() -> OperatorConfig:
        raise throttled_client_error("AccessDeniedException")

    errors = []
    for config in (throttled_config, denied_config):
        client = CamaraNetworkClient(config, "https://operator.invalid", timeout=1.0)
        try:
            client.post("SIM Swap", "/sim-swap/v1/retrieve-date", {"phoneNumber": "+12025550101"})
        except SignalSourceError as error:
            errors.append(error)

    # When a signal is asked / Then the source fails, marked throttled only when it was
    assert [is_throttling(error) for error in errors] == [True, False]
