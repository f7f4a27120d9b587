"""The prices bench/cost.py bills at and the assumptions of its duration model: the report prints
them with the figures, so a reader sees what each figure rests on."""

from __future__ import annotations

# --- prices: us-east-1, on-demand list prices in USD, free tiers left out ---------------------------

# Amazon API Gateway pricing, REST APIs: $3.50 per million requests (the first 333 million a month).
API_GATEWAY_PER_REQUEST = 3.50 / 1_000_000
# AWS Lambda pricing, Arm (Graviton) price: $0.20 per million requests, $0.0000133334 per GB-second
# (the first 7.5 billion GB-seconds a month).
LAMBDA_PER_REQUEST = 0.20 / 1_000_000
LAMBDA_PER_GB_SECOND = 0.0000133334
# Amazon DynamoDB pricing, on-demand capacity, Standard table class: $0.625 per million write
# request units, $0.125 per million read request units.
DYNAMODB_PER_WRITE_UNIT = 0.625 / 1_000_000
DYNAMODB_PER_READ_UNIT = 0.125 / 1_000_000
# AWS KMS pricing: $0.03 per 10,000 requests (symmetric, HMAC and RSA 2048 keys); $0.15 per 10,000
# asymmetric requests on any other key (the stack has none: its tokens are signed in the functions
# under keys derived from an HMAC key).
KMS_PER_REQUEST = 0.03 / 10_000
KMS_PER_ASYMMETRIC_REQUEST = 0.15 / 10_000
# Amazon SNS SMS pricing, United States: about $0.00581 per message sent, carrier fees included;
# an assumption (it varies with the origination number's type and the carrier), priced apart.
SMS_US_PER_MESSAGE = 0.00581

# --- DynamoDB's units -------------------------------------------------------------------------------

WRITE_UNIT_BYTES = 1024  # one write request unit: an item of up to 1 KB
READ_UNIT_BYTES = 4096  # one read request unit: a strongly consistent read of up to 4 KB
TRANSACTION_FACTOR = 2  # a transactional read or write costs twice a plain one

# --- the duration model (assumptions, not measurements) ---------------------------------------------

# What one AWS call keeps a warm function waiting, same Region, connection reused (milliseconds).
CALL_LATENCY_MS = {"dynamodb": 6.0, "kms": 10.0, "sns": 30.0}
OTHER_CALL_LATENCY_MS = 20.0
# Lambda gives a function one full vCPU at 1,769 MB and a proportional share of one below that.
FULL_VCPU_MEMORY_MB = 1769

# --- the change monitor's pass (bench/monitor.py) ---------------------------------------------------

# AWS Step Functions pricing, Standard workflows: $0.025 per 1,000 state transitions (the child
# executions of a Distributed Map in STANDARD mode are billed the same way).
STEP_FUNCTIONS_PER_TRANSITION = 0.025 / 1_000
# Amazon CloudWatch pricing, Logs: $0.50 per GB ingested (Standard log class).
CLOUDWATCH_LOGS_PER_GB = 0.50
# What one invocation of a workflow task writes to its log group (an assumption, not measured here
# where Powertools logs errors only): Lambda's START, END and REPORT lines, the task's one INFO line
# and its metrics as an Embedded Metric Format document.
LOG_BYTES_PER_INVOCATION = 1_500
# What one CAMARA call keeps a monitor check waiting (milliseconds): an assumption, an operator's
# network APIs answer in tens to hundreds of milliseconds.
CAMARA_CALL_LATENCY_MS = 150.0
