"""The local stack's console at ``/console``: a page that watches the stack live, and the feed it
polls at ``/_local/console/feed`` (docs/adr/0105-a-console-fed-by-what-the-stack-already-sees.md).

``reading`` takes the few fields the console shows out of a request and its answer, ``feed`` keeps
the recent requests, the flows and the day's outcomes, ``panels`` reads the outbox, the Connect
batches and the webhook attempts, ``decisions`` reads a chosen client's decision records through the
decision service, and ``routes`` serves the page, the feed and the Decisions panel's routes.
"""
