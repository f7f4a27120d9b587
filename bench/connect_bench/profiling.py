"""Where verify_chunk's time goes: the steps in this process under cProfile (``--profile``)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.connect_bench.generate import CLIENT, KIND, generate


def profile(rows: int, top: int) -> int:
    """validate, verify_chunk over every chunk and deliver of an N-row file, in this process under
    ``mock_aws`` (no HTTP, no Step Functions; the Sandbox decides a chunk's rows in one thread), so
    that cProfile sees the whole call tree (moto's backends included) in one thread. The same file
    is run twice as two batches: once timed without the profiler, once profiled. Also counts the AWS
    calls per verified row."""
    import cProfile
    import io
    import pstats

    import boto3
    import botocore.client
    from moto import mock_aws

    from phoneid import bootstrap
    from phoneid.api.connect_steps import Accepted
    from phoneid.domain.clients import Flag, Solution
    from phoneid_dev.patches import apply_all
    from phoneid_dev.stack import LocalStack

    calls: Counter[str] = Counter()
    counting = [False]
    make_api_call = botocore.client.BaseClient._make_api_call

    def counted(self: Any, operation: str, params: Any) -> Any:
        if counting[0]:
            calls[f"{self.meta.service_model.service_name} {operation}"] += 1
        return make_api_call(self, operation, params)

    botocore.client.BaseClient._make_api_call = counted  # type: ignore[method-assign]
    directory = Path(tempfile.mkdtemp(prefix="phoneid-bench-connect-profile-"))
    apply_all()  # moto as `phoneid dev` runs it
    with mock_aws():
        stack = LocalStack(parameters={"Tier": "sandbox", "Region": "US", "LogLevel": "ERROR"}).provision()
        os.environ.update(stack.environment())
        bootstrap.reset()
        events = boto3.client("events")
        for rule in events.list_rules()["Rules"]:  # the steps are called here, not by the workflow
            ids = [t["Id"] for t in events.list_targets_by_rule(Rule=rule["Name"])["Targets"]]
            if ids:
                events.remove_targets(Rule=rule["Name"], Ids=ids)
        c = bootstrap.container()
        created = c.client_admin.create(
            solution=Solution.VERIFIED_USER, name=CLIENT, countries=["*"], flags=[Flag.AUTO_ENROLLMENT]
        )
        _, enroll_key = c.connect_onboarding.onboard(created.client.client_id, name=CLIENT, types=[KIND])
        connect = c.connect
        s3 = boto3.client("s3")
        bucket = c.settings.connect_bucket
        timings: dict[str, dict[str, float]] = {}
        profiler = cProfile.Profile()
        verified_rows = 0
        for run_name, stamp in (("timed", "20260301120000"), ("profiled", "20260301120001")):
            # new Client Customer IDs each run, so that the second run enrolls as much as the first
            generated = generate(directory, rows, enroll_key, stamp=stamp, customers=run_name[0].upper())
            key = f"clients/{CLIENT}/upload/{generated.path.name}"
            s3.upload_file(str(generated.path), bucket, key)
            etag = str(s3.head_object(Bucket=bucket, Key=key)["ETag"]).strip('"')
            began = time.perf_counter()
            validated = connect.validate.run(bucket, key, etag=etag)
            validate_s = time.perf_counter() - began
            assert isinstance(validated, Accepted), validated
            manifest = json.loads(s3.get_object(Bucket=bucket, Key=validated.manifest_key)["Body"].read())
            profiling = run_name == "profiled"
            counting[0] = profiling
            began = time.perf_counter()
            if profiling:
                profiler.enable()
            for item in manifest:
                verified_rows += (
                    connect.verify_chunk.run(item["batchId"], item["chunk"], item["key"]).rows * profiling
                )
            if profiling:
                profiler.disable()
            verify_s = time.perf_counter() - began
            counting[0] = False
            began = time.perf_counter()
            connect.deliver.run(validated.batch_id)
            deliver_s = time.perf_counter() - began
            timings[run_name] = {"validate": validate_s, "verify": verify_s, "deliver": deliver_s}

    print(f"Connect steps in one process (mock_aws, no HTTP), {rows:,} rows a run")
    for run_name, steps in timings.items():
        print(
            f"  {run_name:<9} validate {steps['validate']:6.1f} s ({rows / steps['validate']:6.0f} rows/s)   "
            f"verify_chunk x{len(manifest)} {steps['verify']:6.1f} s "
            f"({verified_rows / steps['verify']:5.0f} rows/s)   "
            f"deliver {steps['deliver']:5.1f} s"
        )
    print(f"  AWS calls while verifying {verified_rows:,} rows (per row):")
    for name, count in calls.most_common():
        print(f"    {name:<40} {count:8,}  {count / verified_rows:6.2f}")
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).strip_dirs().sort_stats(order).print_stats(top)
        print(f"\n  cProfile of verify_chunk, by {order}:")
        print(text.getvalue().split("\n", 4)[-1] if order == "tottime" else text.getvalue())
    shutil.rmtree(directory, ignore_errors=True)
    return 0
