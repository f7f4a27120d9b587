"""The local stack without its HTTP listener: moto, the provisioned template, the gateway
emulation, the functions' worker processes, the outbox, the queues' pollers and schedules, and, as
the tier and transport ask, the fake operator and the SFTP server. ``phoneid_dev.app`` serves it."""

from __future__ import annotations

import json
import os
import threading
import uuid
from typing import Any

import boto3

from phoneid import bootstrap
from phoneid.bootstrap import container
from phoneid.domain.clients import Flag, Solution
from phoneid.domain.connect import ConnectTransport
from phoneid_dev import workflows
from phoneid_dev.access.recording.hooks import worker_environment
from phoneid_dev.clock import OffsetClock
from phoneid_dev.console import log
from phoneid_dev.emulation.server import FAKE_CREDENTIALS, MotoServer
from phoneid_dev.events import function_context
from phoneid_dev.gateway import AuthorizerAnswers, LocalGateway
from phoneid_dev.operator import FakeOperator
from phoneid_dev.outbox import Outbox
from phoneid_dev.processes import FunctionProcesses, function_specs
from phoneid_dev.sftp.server import DEFAULT_PORT, LocalSftpServer, s3_client
from phoneid_dev.snapshot import state
from phoneid_dev.snapshot.directory import DataDirectory, DataRefused, StackKind
from phoneid_dev.snapshot.own_clients import OwnClients
from phoneid_dev.stack import LocalStack
from phoneid_dev.statefile import default_state_file
from phoneid_dev.template import template
from phoneid_dev.triggers import Polled, pollers, scheduled_functions, scheduler_event
from phoneid_dev.ttl import TtlSweeper


class DevStack:
    """moto, the provisioned template and the gateway: everything but the HTTP listener."""

    def __init__(
        self,
        tier: str,
        region: str,
        base_url: str,
        moto_port: int | None = None,
        *,
        local_url: str | None = None,
        connect_transport: str | None = None,
        data: DataDirectory | None = None,
    ) -> None:
        # With a data directory (``phoneid dev --data``), what it kept is read, and refused, first.
        self.data = data
        self.kind = StackKind(
            tier, region, os.environ.get("AWS_DEFAULT_REGION") or FAKE_CREDENTIALS["AWS_DEFAULT_REGION"]
        )
        snapshot = self._kept_snapshot()
        self._saving = threading.Lock()
        self.moto = MotoServer(moto_port).start()
        ws_base = base_url.replace("http", "ws", 1)
        parameters = {"Tier": tier, "Region": region, "LogLevel": "WARNING"}
        if connect_transport:  # else the template's default, as a deploy without it gets
            parameters["ConnectTransport"] = connect_transport
        self.operator: FakeOperator | None = None
        if tier == "production":
            parameters |= self._start_operator()
        self.stack = LocalStack(
            parameters=parameters,
            # What API Gateway would give in AWS, served by this process instead.
            overrides={
                "PUBLIC_BASE_URL": base_url,
                "WEBSOCKET_URL": f"{ws_base}/_ws",
                "WEBSOCKET_MANAGEMENT_URL": f"{base_url}/_ws-management",
            },
            kept_keys=snapshot["kmsKeys"] if snapshot else {},
        ).provision()
        if snapshot:
            state.put_back(self.stack, snapshot)
        os.environ.update(self.stack.environment())
        os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        bootstrap.reset()
        self.clock = OffsetClock()
        if snapshot:
            self.clock.catch_up(snapshot["clockOffsetSeconds"])
        # The clients the stack makes for itself (the banner's, the demo's): kept in the data directory.
        self.own_clients = OwnClients(
            snapshot["ownClients"] if snapshot else None, str(data.path) if data else ""
        )
        bootstrap.override(clock=self.clock)
        self.stack.processes = self._function_processes()
        self.tier, self.region, self.base_url = tier, region, base_url
        # Where processes on this machine reach it; base_url is what links carry (maybe a LAN address).
        self.local_url = local_url or base_url
        self.gateway = LocalGateway(self.stack, AuthorizerAnswers(self.clock.now))
        self.outbox = Outbox()
        # What Lambda's SQS event source mappings and EventBridge Scheduler do in AWS.
        self.queue_pollers = pollers(self.stack)
        # The change monitor's workflow runs when asked (a pass changes what a developer sees); the
        # token key rotation runs on its own, as its schedule runs it in AWS (``rotate_token_keys``).
        scheduled = scheduled_functions(self.stack.template)
        self.key_rotation = scheduled["TokenKeysSchedule"]
        self.history_appends = scheduled["DecisionLogSchedule"]
        # Connect's transport as the template's ConnectTransport chooses: the SFTP server runs only
        # for sftp (Transfer Family exists only then); s3's presigned URLs go to moto's own endpoint.
        self.connect_transport = container().settings.connect_transport
        self.sftp: LocalSftpServer | None = (
            self._start_sftp() if self.connect_transport is ConnectTransport.SFTP else None
        )

    def _kept_snapshot(self) -> dict[str, Any] | None:
        if self.data is None:
            return None
        snapshot = self.data.load(self.kind)
        if snapshot is not None:
            try:
                state.check_fits(template(), snapshot)
            except ValueError as error:
                raise DataRefused(f"--data {self.data.path}: {error}; use another directory") from None
        return snapshot

    def save_data(self) -> bool:
        """This stack's state into its data directory, if it has one (one save at a time); False
        when there is none, or nothing changed since the last save."""
        if self.data is None:
            return False
        with self._saving:
            return self.data.save(
                self.kind, state.taken(self.stack, self.clock.offset_seconds, self.own_clients.kept)
            )

    def banner_client(self, client_id: str | None = None, client_secret: str | None = None) -> dict[str, str]:
        """The client the banner prints: the one seeded with ``client_id`` and ``client_secret``,
        else the one the data directory kept, else a new one (``phoneid_dev.snapshot.own_clients``)."""
        seeded = (
            {"client_id": client_id, "client_secret": client_secret} if client_id and client_secret else None
        )
        return self.own_clients.get(
            "banner",
            lambda: (
                self.create_client(client_id=client_id, client_secret=client_secret)
                if seeded
                else self.create_client(name="dev")
            ),
            seeded,
        )

    def _function_processes(self) -> FunctionProcesses | None:
        """Worker processes for every function, one invocation at a time each, reaching moto over
        HTTP; PHONEID_LAMBDA_PROCESSES caps them per function (default: the CPUs; 0: run in this
        process, one invocation at a time, e.g. to debug one)."""
        configured = os.environ.get("PHONEID_LAMBDA_PROCESSES", "").strip()
        if configured and not configured.isdigit():
            raise ValueError(f"PHONEID_LAMBDA_PROCESSES must be a whole number, not {configured!r}")
        limit = int(configured) if configured else None
        if limit == 0:
            return None
        return FunctionProcesses(
            function_specs(self.stack.template),
            environment={
                **os.environ,
                "AWS_ENDPOINT_URL": self.moto.endpoint_url,
                **worker_environment(self.stack),  # when the functions' calls are recorded
            },
            clock_offset=lambda: self.clock.offset_seconds,
            limit=limit,
        )

    def _start_sftp(self) -> LocalSftpServer:
        """Connect's SFTP server (Transfer Family in AWS) on PHONEID_SFTP_PORT (default 2222, 0: any
        free port); when the default is taken, another free port (the banner and state file say which)."""
        s3 = s3_client()
        bucket = container().settings.connect_bucket
        requested = os.environ.get("PHONEID_SFTP_PORT", "").strip()

        def server(port: int) -> LocalSftpServer:
            return LocalSftpServer(
                lambda name: container().connect_profiles.get_by_name(name),
                s3,
                bucket,
                port=port,
                host_key=default_state_file().parent / "sftp_host_ed25519_key",
                log=log,
            )

        try:
            return server(int(requested) if requested else DEFAULT_PORT).start()
        except OSError:
            if requested:
                raise
            log(f"SFTP port {DEFAULT_PORT} is taken: serving SFTP on a free port (PHONEID_SFTP_PORT chooses)")
            return server(0).start()

    def _start_operator(self) -> dict[str, str]:
        """Production Mobile Auth and carrier signals against a fake CAMARA operator.

        PHONEID_DEVICE_MSISDN is "this SIM"; ``POST /_local/operator`` scripts the signals per number.
        The operator offers the CAMARA subscriptions PHONEID_OPERATOR_SUBSCRIPTIONS names (default
        all three; empty: none, every signal polled), and sends their notifications from a thread.
        """
        self.operator = FakeOperator(device_msisdn=os.environ.get("PHONEID_DEVICE_MSISDN") or None).start()
        self.operator.subscriptions.background = True
        secrets = boto3.client("secretsmanager")
        secrets.create_secret(Name="camara-operator", SecretString=self.operator.secret_string)
        settings = self.operator.settings
        return {
            "CamaraAuthorizeUrl": settings["CAMARA_AUTHORIZE_URL"],
            "CamaraTokenUrl": settings["CAMARA_TOKEN_URL"],
            "CamaraApiUrl": settings["CAMARA_API_URL"],
            "CamaraCredentialsSecret": "camara-operator",
            "CamaraNetworkApiUrl": settings["CAMARA_NETWORK_API_URL"],
            "CamaraSubscriptions": os.environ.get(
                "PHONEID_OPERATOR_SUBSCRIPTIONS", "sim-swap,reachability,roaming"
            ).strip(),
        }

    def create_client(self, with_public_key: bool = False, **spec: Any) -> dict[str, str]:
        created = container().client_admin.create(
            solution=Solution(spec.get("solution", "identity")),
            name=str(spec.get("name", "")),
            countries=spec.get("countries") or ["*"],
            flags=[Flag(f) for f in spec["flags"]] if "flags" in spec else [Flag.AUTO_ENROLLMENT],
            client_id=spec.get("client_id"),
            client_secret=spec.get("client_secret"),
            tier=spec.get("tier"),
            region=spec.get("region"),
        )
        credentials = {"client_id": created.client.client_id, "client_secret": created.client_secret}
        if with_public_key:
            credentials["public_api_key"] = created.client.public_api_key
        return credentials

    def run_monitor(self) -> dict[str, Any]:
        """One change-monitor pass now, through its workflow as the schedule starts it; then its
        events are delivered. Its summary {passId, checked, events, segmentsDone, ...}."""
        machine = self.stack.physical_ids["MonitorStateMachine"]
        execution = workflows.run(machine, {"passId": f"local-{uuid.uuid4().hex[:12]}"})
        if execution["status"] != "SUCCEEDED":
            raise RuntimeError(f"the monitor pass {execution['status']}: {execution.get('error')}")
        report: dict[str, Any] = json.loads(execution["output"])
        self.deliver_queued()
        return report

    def rotate_token_keys(self) -> dict[str, Any]:
        """One run of the token key rotation, by its scheduled handler (the next window's key made)."""
        report: dict[str, Any] = self.stack.invoke(
            self.key_rotation, scheduler_event(), function_context(self.stack.template, self.key_rotation)
        )
        return report

    def append_history(self) -> dict[str, Any]:
        """One run of the decision history's appends, by its scheduled handler (every minute, as in AWS)."""
        report: dict[str, Any] = self.stack.invoke(
            self.history_appends,
            scheduler_event(),
            function_context(self.stack.template, self.history_appends),
        )
        return report

    def sweep_expired(self) -> int:
        """DynamoDB's TTL on the local clock: expired items deleted, each to its stream's consumer."""
        return TtlSweeper(self.stack, self.clock.now).sweep()

    def deliver_queued(self) -> Polled:
        """Feed the queues' visible messages to their functions until none is left."""
        received = failed = 0
        for poller in self.queue_pollers:
            polled = poller.drain()
            received, failed = received + polled.received, failed + polled.failed
        if received:
            log(f"WEBHOOK {received} event(s): {received - failed} settled, {failed} to retry")
        return Polled(received, failed)

    def retry_webhooks(self) -> int:
        """Every failed delivery's message visible again now (no waiting out the backoff), then fed."""
        released = sum(poller.release() for poller in self.queue_pollers)
        self.deliver_queued()
        return released

    def facts(self) -> dict[str, Any]:
        """How other processes reach this stack and its AWS: the state file of ``phoneid dev`` and
        ``GET /_local/info`` both say this (the CLI's ``--local`` reads either)."""
        return {
            "tier": self.tier,
            "region": self.region,
            "baseUrl": self.base_url,
            "localUrl": self.local_url,
            "pid": os.getpid(),
            "awsEndpointUrl": self.moto.endpoint_url,
            "environment": self.stack.environment(),
            "connectTransport": self.connect_transport.value,
            "sftp": (
                {"host": self.sftp.host, "port": self.sftp.port, "bucket": self.sftp.bucket}
                if self.sftp is not None
                else None
            ),
        }

    def stop(self) -> None:
        if self.sftp is not None:
            self.sftp.stop()
        if self.stack.processes is not None:
            self.stack.processes.stop()
        if self.operator is not None:
            self.operator.stop()
        self.moto.stop()
