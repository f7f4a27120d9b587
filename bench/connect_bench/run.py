"""One run end to end: the local stack started, the client onboarded, a warm-up file, then the
measured file uploaded, waited for, and its figures printed beside the floor's."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.connect_bench.baseline import code_of
from bench.connect_bench.dev import start_dev
from bench.connect_bench.floor import decisions_table, floor_pass, floor_writes, table_keys
from bench.connect_bench.generate import CLIENT, KIND, generate
from bench.connect_bench.history import STEP_FUNCTIONS, STEPS, execution_of
from bench.connect_bench.memory import MB, RssSampler
from bench.connect_bench.outputs import count_records, stored_bytes
from bench.connect_bench.partial import print_partial

WARM_UP_ROWS = 2_000


def warm_up(directory: Path, enroll_key: str, s3: Any, states: Any, bucket: str) -> None:
    """A small file through the workflow first, so that the measured run finds every step's worker
    processes started (as a stack in use would: Lambda's warm execution environments), MaxConcurrency
    of them for the chunks at most."""
    from phoneid.domain.connect import batch_id_of

    began = time.perf_counter()
    stamp = datetime(2026, 1, 1, tzinfo=UTC).strftime("%Y%m%d%H%M%S")
    generated = generate(directory, WARM_UP_ROWS, enroll_key, seed=1, stamp=stamp, customers="W")
    key = f"clients/{CLIENT}/upload/{generated.path.name}"
    s3.upload_file(str(generated.path), bucket, key)
    head = s3.head_object(Bucket=bucket, Key=key)
    batch_id = batch_id_of(key, head.get("VersionId") or str(head.get("ETag", "")).strip('"'))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        batch = states.get(batch_id)
        if batch is not None and batch.state.final:
            print(
                f"warm-up: {WARM_UP_ROWS:,} rows {batch.state.value} in {time.perf_counter() - began:.1f} s "
                "(starts the steps' worker processes)",
                flush=True,
            )
            return
        time.sleep(0.2)
    raise RuntimeError("the warm-up file did not finish within 300 s")


# (label, rows, end to end, floor) of each finished run, for the comparison --baseline prints
FINISHED: list[tuple[str, int, float, float]] = []


def run(rows: int, keep: bool, timeout: float, tree: Path | None = None, label: str = "this checkout") -> int:
    import boto3
    from botocore.config import Config

    directory = Path(tempfile.mkdtemp(prefix="phoneid-bench-connect-"))
    dev = None
    sampler = None
    try:
        print(f"working directory {directory}", flush=True)
        began = time.perf_counter()
        print(f"the service's package: {label}", flush=True)
        dev = start_dev(directory, code_of(tree))
        print(f"phoneid dev (pid {dev.process.pid}) ready in {time.perf_counter() - began:.1f} s", flush=True)
        os.environ["AWS_ENDPOINT_URL"] = dev.state["awsEndpointUrl"]
        os.environ.update(dev.state["environment"])
        client = dev.cli("clients", "create", "--solution", "verified-user", "--name", CLIENT)
        client_id = client["client_id"]
        # the file goes straight to S3: the default transport, no SSH key
        profile = dev.cli("connect", "onboard", client_id, "--name", CLIENT, "--type", KIND)
        began = time.perf_counter()
        generated = generate(directory, rows, profile["enroll_key"])
        size = generated.path.stat().st_size
        print(
            f"generated {generated.path.name}: {rows:,} rows, {size / MB:.1f} MB "
            f"in {time.perf_counter() - began:.1f} s",
            flush=True,
        )

        from phoneid import bootstrap
        from phoneid.domain.connect import batch_id_of, download_key, errors_file_name, output_file_name
        from phoneid.domain.errors import PhoneIdError

        bootstrap.reset()
        container = bootstrap.container()
        states = container.batch_states
        bucket = container.settings.connect_bucket
        config = Config(retries={"max_attempts": 10, "mode": "standard"}, read_timeout=300)
        s3 = boto3.client("s3", config=config)
        sfn = boto3.client("stepfunctions", config=config)
        dynamodb = boto3.client("dynamodb", config=config)
        machine = next(
            m["stateMachineArn"]
            for m in sfn.list_state_machines()["stateMachines"]
            if "connect" in m["name"].lower()
        )

        sampler = RssSampler(dev.process.pid)
        warm_up(directory, profile["enroll_key"], s3, states, bucket)
        keys_before = table_keys(dynamodb, container.settings.enrollments_table)
        records_table = decisions_table(dynamodb, container.settings)
        records_before = table_keys(dynamodb, records_table) if records_table else set()
        sampler.read_workers()
        warm_workers = sampler.worker_peaks()
        load_before = os.getloadavg()[0]
        idle_rss, _ = sampler.read()
        sampler.start()
        key = f"clients/{CLIENT}/upload/{generated.path.name}"
        t0 = time.time()
        s3.upload_file(str(generated.path), bucket, key)
        uploaded = time.time()
        head = s3.head_object(Bucket=bucket, Key=key)
        batch_id = batch_id_of(key, head.get("VersionId") or str(head.get("ETag", "")).strip('"'))
        deadline = time.monotonic() + timeout
        batch, shown, progress = None, "", time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                batch = states.get(batch_id)
            except PhoneIdError:  # a busy machine's local stack may not answer a read in time: ask again
                time.sleep(0.5)
                continue
            if batch is not None:
                line = f"{batch.state.value} {dict(batch.counts or {}).get('valid', '')}"
                if line != shown:
                    print(f"  {time.time() - t0:7.1f} s  batch {batch.state.value}", flush=True)
                    shown = line
                if batch.state.final:
                    break
                if time.monotonic() > progress:  # a long run says how far it got, once a minute
                    progress += 60
                    rss, hwm = sampler.read()
                    pages = s3.get_paginator("list_objects_v2").paginate(
                        Bucket=bucket, Prefix=f"work/{batch_id}/results/"
                    )
                    done = sum(len(page.get("Contents", [])) for page in pages)
                    print(
                        f"  {time.time() - t0:7.1f} s  {batch.state.value}: {done} chunks with results; "
                        f"server RSS {rss / MB:.0f} MB, high-water {hwm / MB:.0f} MB",
                        flush=True,
                    )
            time.sleep(0.5)  # polling the batch's state in another process, as `connect submit` does
        finished = time.time()
        if batch is not None and batch.state.final and t0 < batch.updated_at.timestamp() < finished:
            finished = batch.updated_at.timestamp()  # the server's clock: when deliver wrote the state
        if batch is None or not batch.state.final:
            print(
                f"not finished after {timeout:g} s ({batch.state.value if batch else 'no batch'})", flush=True
            )
            print_partial(sfn, machine, s3, bucket, key, batch_id, rows, t0, sampler)
            csv_seconds, valid_numbers = floor_pass(generated.path)
            print(
                f"  floor           csv + phonenumbers {csv_seconds:.1f} s ({valid_numbers:,} valid "
                "numbers); the enrollments' writes are measured once a run has finished"
            )
            return 1
        sampler.stop()
        end_to_end = finished - t0

        # Deliver writes the batch's final state, then returns: its exit follows in the history.
        settle = time.monotonic() + 60
        described, steps, events = execution_of(sfn, machine, key)
        while described["status"] == "RUNNING" and time.monotonic() < settle:
            time.sleep(0.2)
            described, steps, events = execution_of(sfn, machine, key)

        outputs = {}
        for name in (output_file_name(generated.path.name), errors_file_name(generated.path.name)):
            target = directory / name
            s3.download_file(bucket, download_key(CLIENT, name), str(target))
            outputs[name] = count_records(target)
        (out_rows, out_trailer), (err_rows, err_trailer) = outputs.values()

        # The floor, in the same run: csv + phonenumbers, and the run's own enrollments written bare.
        csv_seconds, valid_numbers = floor_pass(generated.path)
        write_seconds, items, size = floor_writes(dynamodb, container.settings.enrollments_table, keys_before)
        # The decision records are the job's output too (docs/decision-records.md): written bare as well.
        record_seconds, records, record_size = (
            floor_writes(dynamodb, records_table, records_before) if records_table else (0.0, 0, 0)
        )
        enrolled = int((batch.counts or {}).get("enrolled", 0))
        floor = csv_seconds + write_seconds + record_seconds

        counts = dict(batch.counts or {})
        print()
        print(
            f"Connect bench: {rows:,} rows, Sandbox US, local stack (moto), MaxConcurrency 10, "
            f"{os.cpu_count()} CPUs, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after"
        )
        print(f"  batch           {batch.state.value}   {described['status']}   {len(events)} history events")
        print(f"  counts          {_counts_line(counts)}")
        print(f"  expected mix    {json.dumps(dict(sorted(generated.expected.items())))}")
        print(
            f"  files           output {out_rows:,} rows (trailer {out_trailer:,}), "
            f"errors {err_rows:,} rows (trailer {err_trailer:,}); together {out_rows + err_rows:,} "
            f"of {rows:,}: {'all rows accounted for' if out_rows + err_rows == rows else 'ROWS MISSING'}"
        )
        print(
            f"  end to end      {end_to_end:8.1f} s   {rows / end_to_end:8.0f} rows/s   "
            f"(upload {uploaded - t0:.1f} s; from upload to delivered {finished - uploaded:.1f} s)"
        )
        first = min((s.began for s in steps), default=uploaded)
        _, server_peak = sampler.window(uploaded, finished)
        print(
            f"  local stack     {idle_rss / MB:6.0f} MB RSS before the upload, "
            f"peak {server_peak / MB:.0f} MB, "
            f"{sampler.samples[-1][1] / MB:.0f} MB after (moto's storage, Step Functions, the API)"
        )
        print(f"  {'until Validate':<15} {first - uploaded:8.1f} s   (event → execution start)")
        written = {  # what each step leaves in moto's memory (a versioned bucket keeps deleted objects)
            "Validate": stored_bytes(s3, bucket, f"work/{batch_id}/chunks/")
            + stored_bytes(s3, bucket, f"work/{batch_id}/errors")
            + stored_bytes(s3, bucket, f"work/{batch_id}/manifest"),
            "VerifyChunks": stored_bytes(s3, bucket, f"work/{batch_id}/results/"),
            "Deliver": stored_bytes(s3, bucket, f"clients/{CLIENT}/download/"),
        }
        peaks = sampler.worker_peaks()
        step_peaks = {}
        timed = {step.name: step for step in steps}
        for name in STEPS:
            step = timed.get(name)
            took = (
                f"{step.seconds:8.1f} s {rows / step.seconds:8.0f} rows/s" if step else "(not in the history)"
            )
            function = STEP_FUNCTIONS[name]
            if function in peaks:  # the step's own processes (phoneid_dev.processes)
                count, step_peaks[name] = peaks[function]
                warm = warm_workers.get(function, (0, 0))[0]
                memory = (
                    f"peak RSS {step_peaks[name] / MB:6.0f} MB in {count} worker process"
                    f"{'es' if count > 1 else ''} ({warm} warm at the start)"
                )
            elif step is not None:  # it ran in the server (PHONEID_LAMBDA_PROCESSES=0): an upper bound
                _, step_peaks[name] = sampler.window(step.began, step.ended)
                memory = f"peak RSS {step_peaks[name] / MB:6.0f} MB of the whole local stack"
            else:
                memory = "peak RSS unknown"
            print(
                f"  {name:<15} {took}   {memory}; "
                f"{written.get(name, 0) / MB:.1f} MB of objects written to moto"
            )
        print(
            f"  floor           {floor:8.1f} s   = csv + phonenumbers {csv_seconds:.1f} s "
            f"({valid_numbers:,} valid numbers) + BatchWriteItem of the {enrolled:,} enrollments' "
            f"{items:,} new items ({size / MB:.1f} MB) {write_seconds:.1f} s + BatchWriteItem of the "
            f"{records:,} decision records ({record_size / MB:.1f} MB) {record_seconds:.1f} s"
        )
        print(f"  ratio           {end_to_end / floor:8.1f} x the floor   (target 3x)")
        if set(step_peaks) == set(STEPS):
            worst = max(step_peaks.values())
        else:  # a step's memory is unknown: judge by the whole run, the server included
            worst = max([server_peak, *(peak for _, peak in peaks.values())])
            print(f"  steps           the memory of {sorted(set(STEPS) - set(step_peaks))} is unknown")
        print(
            "  targets         "
            "all rows complete: "
            f"{'yes' if out_rows + err_rows == rows and batch.state.value == 'delivered' else 'NO'}; "
            f"every step's peak RSS < 512 MB: {'yes' if worst < 512 * MB else 'NO'} ({worst / MB:.0f} MB); "
            f"within 3x the floor: {'yes' if end_to_end <= 3 * floor else 'NO'} ({end_to_end / floor:.1f} x)"
        )
        FINISHED.append((label, rows, end_to_end, floor))
        return 0
    finally:
        if dev is not None:
            dev.stop()
        if sampler is not None:
            sampler.stop()
        if keep:
            print(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def _counts_line(counts: dict[str, Any]) -> str:
    """The batch's counts, the reason codes of rows not verified summed (their spread is the Sandbox's)."""
    reasons = sum(int(v) for k, v in counts.items() if k.startswith("reason:"))
    shown = {k: v for k, v in sorted(counts.items()) if not k.startswith("reason:")}
    return json.dumps(shown | {"reason:*": reasons})
