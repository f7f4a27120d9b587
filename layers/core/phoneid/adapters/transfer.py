"""Transfer Family users of the Connect SFTP server (service-managed identities).

Each client is one user whose logical home shows exactly two directories, ``/upload`` and
``/download``, mapped onto its own prefixes of the Connect bucket. The user's role (a template output)
grants the bucket; a session policy narrows it to ``clients/${transfer:UserName}/``, so even a wrong
mapping could not reach another client's files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import error_code

_NOT_FOUND = {"ResourceNotFoundException", "UserNotFound"}  # AWS, and moto's name for it


class SftpProvisioningFailed(RuntimeError):
    """Transfer Family refused or failed; the message carries its error code."""


def home_directory_mappings(bucket: str, client_name: str) -> list[dict[str, str]]:
    return [
        {"Entry": "/upload", "Target": f"/{bucket}/clients/{client_name}/upload", "Type": "DIRECTORY"},
        {"Entry": "/download", "Target": f"/{bucket}/clients/{client_name}/download", "Type": "DIRECTORY"},
    ]


def session_policy(bucket: str) -> str:
    """The user's own prefixes only: put into upload/, read both, list both; nothing else."""
    prefix = "clients/${transfer:UserName}"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ListOwnDirectories",
                    "Effect": "Allow",
                    "Action": "s3:ListBucket",
                    "Resource": f"arn:aws:s3:::{bucket}",
                    "Condition": {
                        "StringLike": {
                            "s3:prefix": [
                                f"{prefix}/upload",
                                f"{prefix}/upload/*",
                                f"{prefix}/download",
                                f"{prefix}/download/*",
                            ]
                        }
                    },
                },
                {
                    "Sid": "PutUploads",
                    "Effect": "Allow",
                    "Action": "s3:PutObject",
                    "Resource": f"arn:aws:s3:::{bucket}/{prefix}/upload/*",
                },
                {
                    "Sid": "ReadOwnFiles",
                    "Effect": "Allow",
                    "Action": ["s3:GetObject", "s3:GetObjectVersion"],
                    "Resource": [
                        f"arn:aws:s3:::{bucket}/{prefix}/upload/*",
                        f"arn:aws:s3:::{bucket}/{prefix}/download/*",
                    ],
                },
                {
                    # The bucket's objects are KMS-encrypted; the role names the key, this passes it on.
                    "Sid": "UseBucketKey",
                    "Effect": "Allow",
                    "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
                    "Resource": "*",
                },
            ],
        },
        separators=(",", ":"),
    )


class TransferSftpUsers:
    def __init__(self, transfer: Any, server_id: str, role_arn: str, bucket: str) -> None:
        self._transfer = transfer
        self._server_id = server_id
        self._role_arn = role_arn
        self._bucket = bucket

    def create(self, client_name: str, ssh_public_keys: Sequence[str]) -> None:
        """The user with its logical home and every key; on any failure the user is removed again."""
        try:
            self._transfer.create_user(
                ServerId=self._server_id,
                UserName=client_name,
                Role=self._role_arn,
                HomeDirectoryType="LOGICAL",
                HomeDirectoryMappings=home_directory_mappings(self._bucket, client_name),
                Policy=session_policy(self._bucket),
                Tags=[{"Key": "phoneid:connect-client", "Value": client_name}],
            )
        except (ClientError, BotoCoreError) as error:
            raise self._failed("create the SFTP user", error) from error
        try:
            for key in ssh_public_keys:
                self._transfer.import_ssh_public_key(
                    ServerId=self._server_id, UserName=client_name, SshPublicKeyBody=key
                )
        except (ClientError, BotoCoreError) as error:
            self.delete(client_name)
            raise self._failed("import the SSH keys", error) from error

    def delete(self, client_name: str) -> bool:
        """False when there was no such user."""
        try:
            self._transfer.delete_user(ServerId=self._server_id, UserName=client_name)
        except ClientError as error:
            if error_code(error) in _NOT_FOUND:
                return False
            raise self._failed("delete the SFTP user", error) from error
        except BotoCoreError as error:
            raise self._failed("delete the SFTP user", error) from error
        return True

    def describe(self, client_name: str) -> dict[str, Any] | None:
        try:
            user: dict[str, Any] = self._transfer.describe_user(
                ServerId=self._server_id, UserName=client_name
            )["User"]
        except ClientError as error:
            if error_code(error) in _NOT_FOUND:
                return None
            raise self._failed("describe the SFTP user", error) from error
        return user

    @staticmethod
    def _failed(what: str, error: Exception) -> SftpProvisioningFailed:
        code = error_code(error) if isinstance(error, ClientError) else type(error).__name__
        return SftpProvisioningFailed(f"Transfer Family could not {what}: {code}")
