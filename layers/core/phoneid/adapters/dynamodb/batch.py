"""The former name of ``batch_io``, for the two modules that still import ``read_keys`` from here
(``adapters/dynamodb/__init__.py`` and ``enrollments.py``, split into one module per table in a
change of their own). Delete this module once they import ``batch_io``."""

from phoneid.adapters.dynamodb.batch_io import read_keys

__all__ = ["read_keys"]
