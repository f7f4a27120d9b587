"""moto as the local AWS: in-process (tests), and for ``phoneid dev`` both in-process (its own
handlers) and as a server other processes reach; with what AWS does that moto does not.

- ``server``: moto in this process and on loopback (``MotoServer``), its fake credentials, a free port.
- ``dynamodb_fidelity``: DynamoDB's atomicity under threads, transactions that back up only the items
  they touch, condition expressions parsed once (``atomic_dynamodb_writes``).
- ``paged_scans``: a scan's page continues from its start key instead of walking the table from its
  first item, results unchanged (``paged_scans``).
- ``quicker_calls``: moto's per-call overheads cut, results unchanged (``quicker_moto_calls``).
- ``untracked_items``: the DynamoDB items moto makes to answer calls are not kept for its dashboard.

Every replacement of a moto name is a registered ``phoneid_dev.patches.Patch``; nothing here patches
botocore, boto3 or Powertools.
"""

from phoneid_dev.emulation.server import FAKE_CREDENTIALS, MotoServer, free_port

__all__ = ["FAKE_CREDENTIALS", "MotoServer", "free_port"]
