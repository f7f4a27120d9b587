"""Public-key logins with the SSH keys of the Connect profile whose client name is the user name,
read from the profiles store at each login."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncssh

from phoneid.domain.connect import ConnectProfile
from phoneid_dev.sftp.files import Log

ProfileLookup = Callable[[str], ConnectProfile | None]


class ClientLogins(asyncssh.SSHServer):
    """Public-key logins only, with the keys of the profile whose client name is the user name."""

    def __init__(self, lookup: ProfileLookup, log: Log) -> None:
        self._lookup = lookup
        self._log = log
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn

    async def begin_auth(self, username: str) -> bool:
        try:
            profile = await asyncio.to_thread(self._lookup, username)
        except Exception as error:  # a failing store refuses the login, it does not stop the server
            self._log(f"SFTP login refused: profiles unreadable ({type(error).__name__})")
            profile = None
        keys = "\n".join(profile.ssh_public_keys) if profile else ""
        if keys and self._conn is not None:
            self._conn.set_authorized_keys(asyncssh.import_authorized_keys(keys))
        else:
            self._log(f"SFTP login refused: no Connect client named {username!r}")
        return True  # authentication is always required; without keys none can succeed

    def public_key_auth_supported(self) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False

    def host_based_auth_supported(self) -> bool:
        return False
