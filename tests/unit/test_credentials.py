"""Client secrets are stored only as salted scrypt hashes."""

from __future__ import annotations

from phoneid.domain.credentials import hash_secret, new_client_secret, verify_secret


def test_a_hash_never_contains_the_secret() -> None:
    # Given a client secret
    secret = new_client_secret()

    # When hashed
    stored = hash_secret(secret)

    # Then the stored form does not contain it and names its scheme
    assert secret not in stored
    assert stored.startswith("scrypt$")


def test_two_hashes_of_one_secret_differ() -> None:
    # Given one secret
    secret = new_client_secret()

    # When hashed twice
    first, second = hash_secret(secret), hash_secret(secret)

    # Then the salts make the hashes differ, and both verify
    assert first != second
    assert verify_secret(secret, first)
    assert verify_secret(secret, second)


def test_the_right_secret_verifies_and_another_does_not() -> None:
    # Given a stored hash
    secret = new_client_secret()
    stored = hash_secret(secret)

    # When the secret, a near miss and another secret are checked
    # Then only the secret verifies
    assert verify_secret(secret, stored)
    assert not verify_secret(secret[:-1], stored)
    assert not verify_secret(secret + "x", stored)
    assert not verify_secret(new_client_secret(), stored)


def test_an_unknown_client_never_verifies() -> None:
    # Given no stored hash (unknown client id)
    # When any secret is checked
    # Then it is refused
    assert not verify_secret(new_client_secret(), None)
    assert not verify_secret("", None)


def test_an_over_long_secret_is_refused() -> None:
    # Given a hash of a secret of 513 characters
    secret = "s" * 513
    stored = hash_secret(secret)

    # When the same over-long secret is checked
    # Then it is refused without hashing it
    assert not verify_secret(secret, stored)


def test_a_secret_at_the_length_limit_still_verifies() -> None:
    # Given a secret of 512 characters
    secret = "s" * 512

    # When checked against its hash
    # Then it verifies
    assert verify_secret(secret, hash_secret(secret))
