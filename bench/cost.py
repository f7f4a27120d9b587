"""Dollars per 1,000 verifications: each flow run on moto in this process, priced at AWS list prices.

Every flow goes through the local API Gateway (authorizers and Lambda proxy events included), the
way bench/staged_flow.py runs it. The script measures, it does not list: each request's endpoint,
the functions that served it, every botocore call they made (with its parameters, and the stored
items before and after, for DynamoDB's request units) and each handler's own CPU time. It then
prices that at the us-east-1 on-demand prices below. SMS is counted and priced apart.

What is modelled, not measured (each printed with the figures):

- API Gateway caches an authorizer's answer per token for the TTL in template.yaml
  (``ReauthorizeEvery``), longer than a flow: each token a flow uses is authorized once per flow.
  The integrator's access token is shared by its flows, so this overstates a busy integrator.
- The integrator fetches one access token per ``--flows-per-token`` flows (tokens live 60 minutes).
- The customer's device runs the client API as the web SDK does (clients/web/phoneid.js), with one
  CORS preflight per client API path per flow (browsers keep it 10 minutes); ``--native`` drops them.
- Billed Lambda duration: the handler's CPU time here, AWS calls and moto excluded, stretched by the
  share of a vCPU the function's memory buys, plus a fixed latency per AWS call; rounded up to 1 ms.
  Warm functions only: what a container does once (imports, clients, public keys) is not counted.
- DynamoDB request units from item sizes by DynamoDB's size rules (moto reports no consumed
  capacity): a read is billed on the whole stored item, a write on the larger of the item before
  and after, a transaction twice, an index entry that changes once more.

    .venv/bin/python bench/cost.py [--rounds 3] [--flows-per-token 100] [--native] [--markdown]
"""

from __future__ import annotations

import argparse

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

# isort: split

from bench.cost_bench.measure import measure
from bench.cost_bench.report import print_markdown, print_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per flow, after one warm-up")
    parser.add_argument("--flows-per-token", type=int, default=100, help="flows sharing one access token")
    parser.add_argument("--native", action="store_true", help="a native client: no CORS preflights")
    parser.add_argument("--markdown", action="store_true", help="also print the summary as a Markdown table")
    args = parser.parse_args()
    measured, api = measure(args.rounds, args.flows_per_token, preflights=not args.native)
    print_report(measured, api.stack.template, args.flows_per_token, preflights=not args.native)
    if args.markdown:
        print_markdown(measured)


if __name__ == "__main__":
    main()
