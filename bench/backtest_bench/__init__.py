"""The rooms of bench/backtest.py, a candidate policy replayed over N decision records.

- ``history``: N records as JSON Lines, as ``GET /v3/decisions/{id}`` shows them, with a seeded,
  mostly clean mix of facts over the default policy's signals.
- ``run``: the replay streamed over the file, and what it prints (records/s, elapsed, RSS).
"""
