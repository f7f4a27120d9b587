"""Settings of one stack, read once from the environment the template gives every function.

Nothing else in the code reads ``os.environ``. Each field's alias is its environment variable; the
contract tests check these names against ``template.yaml``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from phoneid.domain.clients import Tier
from phoneid.domain.connect import ConnectTransport
from phoneid.domain.phone import Region

# Set by the local stack in the environment it gives the functions, never by the template.
LOCAL_STACK_VARIABLE = "PHONEID_LOCAL_STACK"


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    tier: Tier = Field(alias="PHONEID_TIER")
    region: Region = Field(alias="PHONEID_REGION")
    sessions_table: str = Field(alias="SESSIONS_TABLE")
    clients_table: str = Field(alias="CLIENTS_TABLE")
    refresh_tokens_table: str = Field(alias="REFRESH_TOKENS_TABLE")
    identities_table: str = Field(alias="IDENTITIES_TABLE")
    rate_limits_table: str = Field(alias="RATE_LIMITS_TABLE")
    device_keys_table: str = Field(alias="DEVICE_KEYS_TABLE")
    # Identity Manager's identities (``/v3/identity``).
    enrollments_table: str = Field(alias="ENROLLMENTS_TABLE")
    # The operator's signal lists (`phoneid signals import`), and checks and change events per client.
    signal_lists_table: str = Field(alias="SIGNAL_LISTS_TABLE")
    activity_table: str = Field(alias="ACTIVITY_TABLE")
    # Connect: one profile per onboarded client (client name, types, Enroll Key hash, SSH keys, emails).
    connect_profiles_table: str = Field(alias="CONNECT_PROFILES_TABLE")
    # Connect batches: the bucket of uploads, results and the workflow's work objects; one record per
    # uploaded file (its state and statistics); the address the batch emails come from (SES).
    connect_bucket: str = Field(alias="CONNECT_BUCKET")
    connect_batches_table: str = Field(alias="CONNECT_BATCHES_TABLE")
    connect_email_sender: str = Field(alias="CONNECT_EMAIL_SENDER")
    # Comma-separated; told when a batch fails or a file comes under an unknown client.
    connect_operator_emails: str = Field(default="", alias="CONNECT_OPERATOR_EMAILS")
    # How clients send files (s3, sftp, none): what onboarding provisions and the CLI issues.
    connect_transport: ConnectTransport = Field(alias="CONNECT_TRANSPORT")

    @property
    def operator_emails(self) -> tuple[str, ...]:
        return tuple(
            address.strip() for address in self.connect_operator_emails.split(",") if address.strip()
        )

    # Decision records (``/v3/decisions``) and how long they are kept (DecisionRetentionDays).
    decisions_table: str = Field(default="", alias="DECISIONS_TABLE")
    decision_retention_days: int = Field(default=1825, ge=1, alias="DECISION_RETENTION_DAYS")
    decisions_stream: str = Field(default="", alias="DECISIONS_STREAM_ARN")
    decision_history_table: str = Field(default="", alias="DECISION_HISTORY_TABLE")

    # Requests under an Idempotency-Key and their answers (the six write routes that honour it only).
    idempotency_table: str = Field(default="", alias="IDEMPOTENCY_TABLE")

    # Days without a successful authentication after which a device key is deactivated.
    key_inactivity_days: int = Field(alias="KEY_INACTIVITY_DAYS", ge=1)
    # Token signing keys: one per window in this table, their private halves sealed by this KMS key;
    # the rotation function a signer runs when its window has no key (the signers only).
    token_keys_table: str = Field(alias="TOKEN_KEYS_TABLE")
    token_signing_key_id: str = Field(alias="TOKEN_SIGNING_KEY_ID")
    token_keys_function: str = Field(default="", alias="TOKEN_KEYS_FUNCTION")
    pii_key_id: str = Field(alias="PII_KEY_ID")
    otp_mac_key_id: str = Field(alias="OTP_MAC_KEY_ID")
    sandbox_sms_topic_arn: str = Field(alias="SANDBOX_SMS_TOPIC_ARN")
    # Where customers' phones and SDKs reach this API (links, Mobile Auth callback); empty: the
    # request's own host and stage.
    public_base_url: str = Field(default="", alias="PUBLIC_BASE_URL")
    websocket_url: str = Field(alias="WEBSOCKET_URL")
    websocket_management_url: str = Field(alias="WEBSOCKET_MANAGEMENT_URL")
    sms_per_number_per_hour: int = Field(alias="SMS_PER_NUMBER_PER_HOUR", ge=1)
    sms_per_client_per_hour: int = Field(alias="SMS_PER_CLIENT_PER_HOUR", ge=1)
    # CAMARA Number Verification (Mobile Auth in production); empty: Mobile Auth is off.
    camara_authorize_url: str = Field(default="", alias="CAMARA_AUTHORIZE_URL")
    camara_token_url: str = Field(default="", alias="CAMARA_TOKEN_URL")
    camara_api_url: str = Field(default="", alias="CAMARA_API_URL")
    camara_credentials_secret: str = Field(default="", alias="CAMARA_CREDENTIALS_SECRET")
    # {apiRoot} of the operator's CAMARA network APIs (SIM Swap, KYC, ...); empty: no carrier signals.
    camara_network_api_url: str = Field(default="", alias="CAMARA_NETWORK_API_URL")
    # The CAMARA subscriptions the operator offers (comma-separated: sim-swap, reachability, roaming);
    # empty: every signal is polled. Push also needs PUBLIC_BASE_URL, the sink's base given to the operator.
    camara_subscriptions: str = Field(default="", alias="CAMARA_SUBSCRIPTIONS")
    push_subscriptions_table: str = Field(default="", alias="PUSH_SUBSCRIPTIONS_TABLE")
    # The change monitor's passes (plan, segment progress, totals) and the most segments a pass has.
    monitor_passes_table: str = Field(default="", alias="MONITOR_PASSES_TABLE")
    monitor_max_segments: int = Field(default=256, ge=1, le=10_000, alias="MONITOR_MAX_SEGMENTS")
    # The queue of change events for the clients' webhooks (the monitor and delivery functions only).
    webhook_queue_url: str = Field(default="", alias="WEBHOOK_QUEUE_URL")
    # True on the local stack only (``phoneid dev``, and the moto stacks of the tests), which sets it;
    # the template never does. It lets webhooks reach receivers on loopback, on the same machine.
    local_stack: bool = Field(default=False, alias=LOCAL_STACK_VARIABLE)

    @property
    def mobile_auth_configured(self) -> bool:
        return all(
            (
                self.camara_authorize_url,
                self.camara_token_url,
                self.camara_api_url,
                self.camara_credentials_secret,
            )
        )

    @property
    def carrier_signals_configured(self) -> bool:
        return all((self.camara_token_url, self.camara_credentials_secret, self.camara_network_api_url))

    @property
    def push_configured(self) -> bool:
        return all(
            (
                self.carrier_signals_configured,
                self.camara_subscriptions.strip(),
                self.public_base_url,
                self.push_subscriptions_table,
            )
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        return cls.model_validate(dict(os.environ if env is None else env))

    @classmethod
    def variable_names(cls) -> set[str]:
        """The variables the template gives the functions (the local stack's own not among them)."""
        return {field.alias for field in cls.model_fields.values() if field.alias} - {LOCAL_STACK_VARIABLE}


@cache
def settings() -> Settings:
    return Settings.from_env()


class Tracing(BaseModel):
    """Whether a function traces with X-Ray, by Powertools' documented rule: in Lambda
    (``LAMBDA_TASK_ROOT``), not under SAM local or Chalice, and not ``POWERTOOLS_TRACE_DISABLED``.

    Apart from ``Settings`` because every function has it, the authorizers and tools included."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    disabled: bool = Field(default=False, alias="POWERTOOLS_TRACE_DISABLED")
    lambda_task_root: str = Field(default="", alias="LAMBDA_TASK_ROOT")
    sam_local: str = Field(default="", alias="AWS_SAM_LOCAL")
    chalice_local: str = Field(default="", alias="AWS_CHALICE_CLI_MODE")

    @property
    def enabled(self) -> bool:
        emulated = bool(self.sam_local or self.chalice_local)
        return bool(self.lambda_task_root) and not (emulated or self.disabled)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Tracing:
        return cls.model_validate(dict(os.environ if env is None else env))


@cache
def tracing() -> Tracing:
    return Tracing.from_env()
