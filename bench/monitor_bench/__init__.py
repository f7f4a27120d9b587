"""The rooms of bench/monitor.py, the change monitor's pass over N identities on moto.

- ``identities``: N active identities enrolled through the enrollment store's bulk path.
- ``tally``: what the pass did, counted where it happens (checks saved, sources asked, invocations).
- ``passes``: a pass run through the monitor's workflow, and one interrupted and started again.
- ``proof``: every active identity checked exactly once by a pass, from the stored state and the tally.
- ``floor``: the bare parallel scan of the same table; ``memory``: peak RSS per phase.
- ``metered``: a pass over a sample under bench/cost_bench's meter, for the cost model
  (``bench.cost_bench.monitor_model``).
- ``run``: the bench, and what it prints.
"""
