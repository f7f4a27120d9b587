"""The ``phoneid`` command: operator tooling beside the service, never in the Lambda layer.

It imports ``phoneid`` (and ``phoneid_dev`` for the local stack); nothing in ``phoneid`` imports it
(docs/adr/0094-operator-tooling-beside-the-service.md). ``main`` builds the parser from the command
modules of ``phoneid_cli.commands``; each command acts on the stack ``phoneid_cli.targets`` resolves.
"""
