"""The decision records' Merkle tree (phoneid.domain.merkle) at export scale: seconds and peak RSS
to build a tree of N leaves and make an inclusion proof for every leaf, as an export does.

Phases, in one process, each with its peak RSS (VmHWM reset before it, bench/monitor_bench/memory):

1. N leaf hashes of distinct records (the input an export holds anyway).
2. The tree built from them (every level kept).
3. An inclusion proof for each of the N leaves at the full size, then as many at a past size
   (a checkpoint of 3N/4 leaves: its right edge is not a perfect subtree).
4. A seeded sample of the proofs verified as an auditor would, and consistency proofs between
   a sample of checkpoint pairs, made and verified.
5. The N leaves appended to a frontier, as a batch appended to a tree held elsewhere.

Figures for comparing changes on one machine. Prints; asserts nothing but that the proofs verify.

    .venv/bin/python bench/merkle.py [--leaves 1000000] [--sample 10000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import TypeVar

import _setup  # noqa: F401 - first: the import path (bench/_setup.py)

# isort: split

from bench.monitor_bench.memory import peak_mb, reset_peak, resident_mb
from phoneid.domain.merkle import Frontier, Tree, leaf_hash, verify_consistency, verify_inclusion

T = TypeVar("T")


def phase(name: str, count: int, work: Callable[[], T]) -> T:
    """Run ``work``, printing its seconds, its rate over ``count`` items and its peak RSS."""
    reset_peak()
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    rate = f"{count / seconds:>12,.0f}/s" if seconds else ""
    print(f"{name:<44} {count:>10,} {seconds:>8.2f} s {rate} peak {peak_mb():>6,} MB")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=10_000, help="proofs verified, checkpoint pairs")
    arguments = parser.parse_args()
    n, sample = arguments.leaves, arguments.sample
    past = max(1, n * 3 // 4)
    draw = random.Random(9162)

    print(f"baseline RSS {resident_mb()} MB")
    leaves = phase("leaf hashes", n, lambda: [leaf_hash(b"record %d" % number) for number in range(n)])
    tree = phase("tree built", n, lambda: Tree(leaves))
    levels = sum(len(tree.leaf(0)) * (n >> height) for height in range(n.bit_length()))
    print(f"{'':<44} stored levels {levels / 2**20:,.1f} MiB, RSS now {resident_mb():,} MB")

    def proofs(size: int) -> int:
        """Every leaf's proof at ``size``, each dropped once made, as an export streams them."""
        return sum(len(tree.inclusion_proof(index, size)) for index in range(size))

    hashes = phase("inclusion proofs at the full size", n, lambda: proofs(n))
    print(f"{'':<44} {hashes / n:.1f} hashes a proof")
    phase(f"inclusion proofs at size {past:,}", past, lambda: proofs(past))

    def verify_sample() -> None:
        root = tree.root(n)
        for index in (draw.randrange(n) for _ in range(sample)):
            verify_inclusion(leaves[index], index, n, tree.inclusion_proof(index, n), root)

    phase("inclusion proofs made and verified (sample)", sample, verify_sample)

    def consistency_sample() -> None:
        for _ in range(sample):
            new_size = draw.randint(1, n)
            old_size = draw.randint(1, new_size)
            proof = tree.consistency_proof(old_size, new_size)
            verify_consistency(old_size, new_size, tree.root(old_size), tree.root(new_size), proof)

    phase("consistency proofs made and verified (sample)", sample, consistency_sample)

    def appended() -> Frontier:
        frontier = Frontier()
        frontier.extend(leaves)
        return frontier

    frontier = phase("leaves appended to a frontier", n, appended)
    assert frontier.root() == tree.root(n)


if __name__ == "__main__":
    main()
