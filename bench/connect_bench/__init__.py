"""The rooms of bench/connect.py, which runs a Connect file of N rows end to end on the local stack.

- ``names``, ``generate``: the file and what each of its rows is expected to come to.
- ``dev``: ``phoneid dev`` as a subprocess, and the CLI against it.
- ``memory``, ``history``, ``outputs``: what is measured (memory from /proc, each step's time from the
  execution's history, the delivered files and the bytes stored); ``floor``: what it is measured against.
- ``run``: one run and its figures; ``partial``: what an unfinished run got done;
  ``profiling``: the steps in this process under cProfile (``--profile``).
"""
