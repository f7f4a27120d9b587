"""The bench: a metered sample pass, then N identities, the floor, a pass, and a pass interrupted and
started again, each proven; what it prints."""

from __future__ import annotations

from moto import mock_aws

from bench.monitor_bench import identities, memory
from bench.monitor_bench.floor import bare_scan
from bench.monitor_bench.metered import metered_pass
from bench.monitor_bench.model_report import print_model
from bench.monitor_bench.passes import output, run_pass, segment_failing_after
from bench.monitor_bench.proof import Proven, prove
from bench.monitor_bench.tally import Tally, timed
from phoneid.domain.monitor_pass import plan_segments
from phoneid_dev.patches import apply_all
from phoneid_dev.workflows import retry_waits
from tests.harness import PUBLIC_BASE_URL, Api

PASS = "2026-03-02T06:00:00Z"
RESUMED_PASS = "2026-03-03T06:00:00Z"
FAILING_SEGMENT = 1


def _proven(proven: Proven) -> str:
    return (
        f"{proven.active:,} active, {proven.marked:,} carry the pass's marker, {proven.checked:,} checked;"
        f" {proven.saves:,} checks saved (at most {proven.most_saves} an identity),"
        f" {proven.asked:,} source lookups (at most {proven.most_asked} a kind and number)"
    )


def run(count: int, sample: int, model_only: bool) -> int:
    apply_all()  # moto as `phoneid dev` runs it, paged scans included
    retry_waits.retry_delay_scale = 0.0  # the interrupted pass's retries without their waits
    with mock_aws():
        parameters = {"Tier": "sandbox", "Region": "US", "LogLevel": "ERROR"}
        api = Api.on_moto(parameters, overrides={"PUBLIC_BASE_URL": PUBLIC_BASE_URL})
        owners = identities.clients(api)
        identities.enroll(api, owners, 0, sample)
        metered = metered_pass(api, "2026-03-01T06:00:00Z")
        if model_only:
            print_model(api.stack.template, metered)
            return 0
        _, enrolling = timed(lambda: identities.enroll(api, owners, sample, count - sample))
        api.clock.advance(hours=1)
        items = api.container.enrollment_store.approximate_count()
        segments = plan_segments(items, maximum=api.container.settings.monitor_max_segments)
        # The fault comes a third of the way into the segment (its pages: 100 items each).
        pages_before_the_fault = max(1, items // segments // 100 // 3)
        baseline = memory.resident_mb()
        print(
            f"monitor pass over {count:,} active identities ({segments} segments, pages of 100 items),"
            f" Sandbox US stack on moto in this process; {count - sample:,} enrolled in {enrolling:.0f} s"
        )
        print(f"  resident before the phases: {baseline} MB (moto's tables included)")

        memory.reset_peak()
        (read, pages), floor_s = timed(lambda: bare_scan(api, segments))
        floor_peak = memory.peak_mb()
        print(
            f"  floor, bare parallel scan: {floor_s:.1f} s, {read / floor_s:,.0f} identities/s"
            f" ({read:,} identities, {pages:,} pages), peak RSS {floor_peak} MB"
        )

        tally = Tally()
        with tally.counting(api.stack):
            memory.reset_peak()
            execution, pass_s = timed(lambda: run_pass(api, PASS))
            pass_peak = memory.peak_mb()
            proven = prove(api, PASS, output(execution), tally)
            plan, segments_phase, summary = (tally.phase(f) for f in _FUNCTIONS)
            print(
                f"  pass ({execution['status']}): {pass_s:.1f} s, {count / pass_s:,.0f} identities/s,"
                f" peak RSS {pass_peak} MB; pass / floor: {pass_s / floor_s:.1f}x time,"
                f" {pass_peak / max(floor_peak, 1):.2f}x peak RSS"
            )
            checking = segments_phase[1] - segments_phase[0]
            print(
                f"    plan {plan[1] - plan[0]:.2f} s; check segments {checking:.1f} s"
                f" ({segments_phase[2]} invocations); summarise {summary[1] - summary[0]:.2f} s"
            )
            print(f"    proven: {_proven(proven)}")

            tally.clear()
            api.clock.advance(days=1)
            with segment_failing_after(FAILING_SEGMENT, pages_before_the_fault) as refused:
                failed = run_pass(api, RESUMED_PASS)
            if failed["status"] != "FAILED" or not refused:
                raise RuntimeError(f"the interrupted pass was not interrupted: {failed['status']}")
            resumed, resumed_s = timed(lambda: run_pass(api, RESUMED_PASS))
            proven = prove(api, RESUMED_PASS, output(resumed), tally)
            print(
                f"  interrupted pass: segment {FAILING_SEGMENT}'s progress refused after"
                f" {pages_before_the_fault} pages ({len(refused)} attempts), execution {failed['status']}"
                f" ({failed.get('error')}); started again under the same passId: {resumed['status']}"
                f" in {resumed_s:.1f} s"
            )
            print(f"    proven over both executions: {_proven(proven)}")
        print_model(api.stack.template, metered)
    return 0


_FUNCTIONS = ("MonitorPlanFunction", "WebhookMonitorFunction", "MonitorSummaryFunction")
