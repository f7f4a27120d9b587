"""DynamoDB adapters, one module per table; items are mapped explicitly, every state change is one
conditional write.

``sessions`` (sessions and their pointers), ``device_keys``, ``clients``, ``refresh_tokens``,
``identities`` (the operator's identity records), ``rate_limits``, ``enrollments`` (Identity Manager's
identities, a package of its own), ``lists`` (the signal lists), ``activity`` (checks and change
events), ``token_keys``, ``connect_profiles`` and ``batches`` (Connect's batch records). ``items``
maps values to items and back; ``batch`` reads and writes many items at once.

Nothing is imported here: a handler loads only the tables it uses
(docs/adr/0087-a-module-per-dynamodb-table.md).
"""
