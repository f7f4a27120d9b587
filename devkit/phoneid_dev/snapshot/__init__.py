"""What ``phoneid dev --data DIR`` keeps across restarts: the state of the services that hold data,
exported from moto into one JSON file in DIR and imported into the next start's freshly provisioned
stack (docs/adr/0106-local-state-kept-in-a-data-directory.md).

``directory`` reads and writes DIR (the format's version, the stack it belongs to, 0600 files);
``services`` exports and imports DynamoDB items, S3 objects and SQS messages; ``keys`` keeps the KMS
keys' ids and material, without which nothing sealed (PII, token signing keys, webhook secrets)
would open again.
"""
