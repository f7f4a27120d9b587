"""PhoneID: phone possession and identity verification, as a serverless AWS service."""

# The package's version, as pyproject.toml says (a contract test keeps them equal): the Lambda layer
# ships the package without its distribution metadata, so importlib.metadata cannot tell it there.
__version__ = "0.1.0"
