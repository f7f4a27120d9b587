"""The local stack's SFTP server: what Transfer Family is in AWS, on 127.0.0.1 (asyncssh).

Users are the onboarded Connect clients: the login name is the client name and the keys are the
SSH public keys of its profile, read from the profiles store at each login (so a client onboarded
while the stack runs can log in at once; a removed one cannot). Like a Transfer Family user with a
logical home directory, each user sees exactly this tree, backed by the Connect bucket in moto S3:

  /                 the two directories below, nothing else
  /upload/{file}    clients/{name}/upload/{file}     put (one object per upload), get, ls
  /download/{file}  clients/{name}/download/{file}   get, ls (read-only: the service writes here)

No subdirectories, renames, removals, links or other paths; ``..`` cannot climb above ``/``. An
upload is spooled to a temporary file and put into S3 when the client closes it (multipart for large
files), so memory stays bounded whatever the file's size; the object appears — and the batch
workflow starts — once the upload is complete. As in Transfer Family, an upload cut off mid-way is
still closed and stored as it is (the workflow rejects it: its trailer is missing or its count off).

- ``paths``: the client's virtual paths (``VirtualPath``, ``resolve``).
- ``area``: a client's prefixes of the Connect bucket (``ClientArea``).
- ``files``: the SFTP session over them (``ClientFiles``).
- ``logins``: public-key logins from the profiles store (``ClientLogins``).
- ``server``: the server itself (``LocalSftpServer``), its host key and its S3 client.
"""

from phoneid_dev.sftp.server import DEFAULT_PORT, LocalSftpServer, s3_client

__all__ = ["DEFAULT_PORT", "LocalSftpServer", "s3_client"]
