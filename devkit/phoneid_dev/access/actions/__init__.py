"""A botocore call as the IAM requests AWS authorizes for it: action, resource ARN, condition keys.

AWS does not authorize one action per API operation: a ``TransactWriteItems`` is a ``PutItem``,
``UpdateItem``, ``DeleteItem`` or ``ConditionCheckItem`` on each item's table, a multipart upload is
``s3:PutObject``, a ``HeadObject`` is ``s3:GetObject`` (``GetObjectVersion`` with a version id), an
SMS to a number has no resource but ``*``. Each operation the functions call is mapped here as the
Service Authorization Reference describes it; an operation that is not raises ``Unmapped``, so a
new call cannot pass the check unexamined.

Condition keys are set where the request carries them (``kms:EncryptionContext:*``,
``ses:FromAddress``, ``s3:prefix``, ``dynamodb:Attributes`` and ``dynamodb:Select``...); a key that
is not set is absent, as in AWS. Two choices AWS leaves unsaid:

- ``dynamodb:Select`` of a ``GetItem`` or ``BatchGetItem`` without a projection is
  ``ALL_ATTRIBUTES`` (of a ``Query`` of an index, ``ALL_PROJECTED_ATTRIBUTES``, DynamoDB's default).
- A ``GetObject`` or ``HeadObject`` that finds no object also asks for ``s3:ListBucket`` on the
  bucket with no ``s3:prefix``: S3 answers 404 only to a caller allowed to list the bucket (else
  403), and does not document the context of that check.

A bucket encrypted by default with a KMS key (``bucket_keys``) has S3 call KMS with the caller's
permissions: reading an object is also ``kms:Decrypt``, writing one ``kms:GenerateDataKey`` (and a
multipart upload ``kms:Decrypt``), on that key, through S3.

- ``requests``: the call, its stack and the request (``Call``, ``Stack``, ``Request``), and ``Mappers``.
- One module per AWS service (``dynamodb``, ``kms``, ``s3``, ``sns``, ``sqs``, ``ses``,
  ``secretsmanager``, ``awslambda``, ``stepfunctions``, ``apigateway``, ``cloudwatch``): its mappers.
- ``registry``: every service's mappers together, and ``requests_of``.
"""

from phoneid_dev.access.actions.registry import requests_of
from phoneid_dev.access.actions.requests import Call, Request, Stack, Unmapped, Value

__all__ = ["Call", "Request", "Stack", "Unmapped", "Value", "requests_of"]
