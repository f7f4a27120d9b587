"""The composition root, one module per thing it wires, each a class of parts built on the one
before it, assembled by ``container.Container``; ``phoneid.bootstrap`` is its public face.

``base`` (settings, clock, the Sandbox's catalogue) < ``aws`` (the clients) < ``keys`` (KMS's uses)
< ``stores`` (the DynamoDB tables); ``carrier`` (texts, Mobile Auth, CAMARA signals) on ``aws``;
``tokens`` and ``admin`` (the operator's services) on ``stores``; ``signals`` and ``webhooks`` on
``stores`` and ``carrier``; ``flows`` (the API's services) on ``signals`` and ``tokens``; ``connect``
on ``flows``. No module imports a service or an adapter at import time: each part imports its own
in the property that builds it. Why: docs/adr/0086-the-composition-root-by-what-it-wires.md.
"""
