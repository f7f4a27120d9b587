"""Connect: batch verification files, pure (no I/O). The file format is specified in
docs/connect.md#the-file-format-in-detail.

What the rest of PhoneID uses of a batch is named here:

- ``profile``: a client's Connect profile and the stack's transport;
- ``names``: client and file names, the S3 keys of uploads, downloads and work objects, batch ids;
- ``batch``: a batch's record and its states;
- ``stats``: a batch's statistics;
- ``errors``: the workflow steps' errors, and what counts as throttled.

The file format itself is imported from its modules, only by the steps that read or write files:
``records`` (the CSV records of a text, streamed), ``reader`` (an input file and its authorization
checks), ``rejection`` (why a file is rejected), ``rows`` (a detail row and the row checks),
``seen_keys`` (the duplicate keys' table) and ``writer`` (the output, error and rejected files).
"""

from phoneid.domain.connect.batch import Batch, BatchState
from phoneid.domain.connect.errors import (
    BatchCountMismatch,
    BatchNotFound,
    ChunkThrottled,
    ConnectStepError,
    is_throttling,
)
from phoneid.domain.connect.names import (
    CLIENT_NAME_PATTERN,
    FILE_REGIONS,
    BatchFileName,
    FileRegion,
    batch_id_of,
    chunk_key,
    download_key,
    errors_file_name,
    errors_key,
    file_stem,
    manifest_key,
    output_file_name,
    parse_file_name,
    parse_upload_key,
    rejected_file_name,
    result_key,
    upload_key,
    valid_client_name,
    work_prefix,
)
from phoneid.domain.connect.profile import VERIFICATION_TYPES, ConnectProfile, ConnectTransport
from phoneid.domain.connect.stats import DUPLICATE_CODE, PROCESSING_FAILED_CODE, BatchStats

__all__ = [
    "CLIENT_NAME_PATTERN",
    "DUPLICATE_CODE",
    "FILE_REGIONS",
    "PROCESSING_FAILED_CODE",
    "VERIFICATION_TYPES",
    "Batch",
    "BatchCountMismatch",
    "BatchFileName",
    "BatchNotFound",
    "BatchState",
    "BatchStats",
    "ChunkThrottled",
    "ConnectProfile",
    "ConnectStepError",
    "ConnectTransport",
    "FileRegion",
    "batch_id_of",
    "chunk_key",
    "download_key",
    "errors_file_name",
    "errors_key",
    "file_stem",
    "is_throttling",
    "manifest_key",
    "output_file_name",
    "parse_file_name",
    "parse_upload_key",
    "rejected_file_name",
    "result_key",
    "upload_key",
    "valid_client_name",
    "work_prefix",
]
