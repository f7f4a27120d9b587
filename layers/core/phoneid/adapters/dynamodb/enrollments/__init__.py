"""Identity Manager's table: identities per client, their places, and the indexes that find them.

Items (one table, ``pk`` the only key):

- identity ``{clientId}#{serviceId}``: the number in clear (``phoneKey`` = ``{clientId}#{phone}``
  feeds the ``byPhone`` index), ``createdSk`` feeds the ``byClient`` index (listing pages), and
  ``pii``: names, attributes, clientHumanId and deviceId sealed by KMS with the context
  {clientId, serviceId, use: enrollment}. ``place`` names the place item it holds, if any;
  ``monitorState`` is the change monitor's (``monitor_states``).
- place ``{clientId}#customer#{clientCustomerId}`` or ``{clientId}#number#{phone}`` (identities
  without a clientCustomerId): which identity holds it. Creating an identity and taking its place is
  one transaction, so two concurrent enrollments of one customer cannot both create an identity.
- roster ``{clientId}#roster#{phone}``: the ``serviceIds`` of the client's identities of the number
  (up to ``ROSTER_LIMIT``), written in each enrollment's and disenrollment's transaction, so a
  number's reads find what the ``byPhone`` index, which lags, does not have yet; deleted with the
  number's last identity (docs/adr/0099-reads-of-a-number-see-its-enrollments-at-once.md).

Disenrolling keeps a tombstone (ids, status, times, ``ttl``) and removes everything else, the index
keys included, so the indexes never hold a disenrolled identity.

``store`` is the ``EnrollmentStore`` port, one enrollment at a time; ``bulk`` enrolls many in a few
calls, ``pages`` lists them, ``items`` maps items both ways and holds the reads and transactions
they share; ``monitor_states`` is the ``MonitorStateStore`` port on the same items.

Nothing is imported here: a module that imports ``items`` does not import its siblings with it, and
no module of the package waits on another that waits on it
(docs/adr/0088-enrollments-a-package-its-rules-in-the-domain.md).
"""
