"""What a run that did not finish in time got done, printed instead of its figures."""

from __future__ import annotations

import time
from typing import Any

from bench.connect_bench.history import execution_of
from bench.connect_bench.memory import MB, RssSampler
from bench.connect_bench.outputs import stored_bytes


def print_partial(
    sfn: Any,
    machine: str,
    s3: Any,
    bucket: str,
    key: str,
    batch_id: str,
    rows: int,
    t0: float,
    sampler: RssSampler,
) -> None:
    """What a run that did not finish got done: its steps so far, the chunks with results, memory."""
    now = time.time()
    rss, hwm = sampler.read()
    print(f"  server RSS      {rss / MB:6.0f} MB now, high-water {hwm / MB:.0f} MB")
    _, steps, events = execution_of(sfn, machine, key)
    chunks_written = stored_bytes(s3, bucket, f"work/{batch_id}/chunks/") + stored_bytes(
        s3, bucket, f"work/{batch_id}/errors"
    )
    for step in steps:
        start, peak = sampler.window(step.began, step.ended)
        print(
            f"  {step.name:<15} {step.seconds:8.1f} s {rows / step.seconds:8.0f} rows/s   peak RSS "
            f"{peak / MB:6.0f} MB (+{(peak - start) / MB:.0f} over {start / MB:.0f} at its start; "
            f"{chunks_written / MB:.1f} MB of objects written to moto)"
        )
    map_began = next(
        (e["timestamp"].timestamp() for e in events
         if e["type"] == "MapStateEntered" and e["stateEnteredEventDetails"]["name"] == "VerifyChunks"),
        None,
    )  # fmt: skip
    counted = {}
    for part in ("chunks", "results"):
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"work/{batch_id}/{part}/")
        counted[part] = sum(len(page.get("Contents", [])) for page in pages)
    print(
        f"  VerifyChunks    {counted['results']:,} of {counted['chunks']:,} chunks with results "
        f"after {now - t0:.0f} s"
    )
    if map_began is not None and counted["results"]:
        start, peak = sampler.window(map_began, now)
        per_chunk = (now - map_began) / counted["results"]
        left = (counted["chunks"] - counted["results"]) * per_chunk
        print(
            f"                  {now - map_began:.0f} s so far: {per_chunk:.2f} s a chunk, "
            f"{counted['results'] * 1000 / (now - map_began):.0f} rows/s; peak RSS {peak / MB:.0f} MB "
            f"(+{(peak - start) / MB:.0f}); the rest would take ~{left:.0f} s more "
            f"(end to end ~{now - t0 + left:.0f} s before Deliver)"
        )
