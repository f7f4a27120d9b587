"""The rooms of bench/cost.py, which prices each flow from what it measures on moto.

- ``prices``: the list prices and the duration model's assumptions.
- ``dynamodb_units``, ``lambda_duration``, ``usage``: the pricing arithmetic, pure.
- ``records``: what is recorded of a flow (requests, invocations, AWS calls).
- ``template_facts``, ``stored_items``, ``meter``: the measuring, in the stack's own process.
- ``flows``, ``measure``: the flows and their measured rounds; ``report``: what is printed.
- ``monitor_model``: the change monitor's pass at scale (bench/monitor.py): its time, bound and
  cost from what a metered pass measured per identity (tests/unit/test_monitor_cost_model.py).

Named here: the pricing model, which imports neither moto nor the stack
(tests/unit/test_cost_model.py checks it).
"""

from __future__ import annotations

from bench.cost_bench.dynamodb_units import (
    attribute_value_size,
    index_write_units,
    item_size,
    number_size,
    read_units,
    whole_item_query,
    write_units,
)
from bench.cost_bench.lambda_duration import billed_duration_ms, gb_seconds, waiting_ms
from bench.cost_bench.records import AwsCall, Invocation, Request
from bench.cost_bench.usage import Cost, Usage

__all__ = [
    "AwsCall",
    "Cost",
    "Invocation",
    "Request",
    "Usage",
    "attribute_value_size",
    "billed_duration_ms",
    "gb_seconds",
    "index_write_units",
    "item_size",
    "number_size",
    "read_units",
    "waiting_ms",
    "whole_item_query",
    "write_units",
]
