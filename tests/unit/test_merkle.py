"""RFC 9162 Merkle trees: known answers, proofs equal to the RFC's recursive definitions, and
verifiers that refuse every tampering with a message naming what failed."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from phoneid.domain.merkle import (
    EMPTY_ROOT,
    Frontier,
    ProofError,
    Tree,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)

# Known answers copied as data from github.com/transparency-dev/merkle (the file's "source" names
# the commit and paths): the classic 8 test leaves, every node of their tree, the roots of sizes
# 0 to 8, the compact ranges, and the inclusion and consistency proofs of its test suite.
VECTORS: dict[str, Any] = json.loads((Path(__file__).parent / "merkle_vectors.json").read_text())
LEAVES = [leaf_hash(bytes.fromhex(data)) for data in VECTORS["leaves"]]


def unhex(values: list[str]) -> list[bytes]:
    return [bytes.fromhex(value) for value in values]


NOT_FROM_0 = "an old size of 0 is not provable (RFC 9162 2.1.4 proves from one leaf up)"


def leaves_of(count: int, salt: str = "") -> list[bytes]:
    return [leaf_hash(f"record {salt}{number}".encode()) for number in range(count)]


# The RFC's definitions, word for word (RFC 9162 2.1.1, 2.1.3.1, 2.1.4.1), to check the tree against.
def split_of(width: int) -> int:
    k = 1
    while k * 2 < width:
        k *= 2
    return k


def ref_mth(hashes: list[bytes]) -> bytes:
    if not hashes:
        return EMPTY_ROOT
    if len(hashes) == 1:
        return hashes[0]
    k = split_of(len(hashes))
    return node_hash(ref_mth(hashes[:k]), ref_mth(hashes[k:]))


def ref_path(m: int, hashes: list[bytes]) -> list[bytes]:
    if len(hashes) == 1:
        return []
    k = split_of(len(hashes))
    if m < k:
        return [*ref_path(m, hashes[:k]), ref_mth(hashes[k:])]
    return [*ref_path(m - k, hashes[k:]), ref_mth(hashes[:k])]


def ref_subproof(m: int, hashes: list[bytes], whole: bool) -> list[bytes]:
    n = len(hashes)
    if m == n:
        return [] if whole else [ref_mth(hashes)]
    k = split_of(n)
    if m <= k:
        return [*ref_subproof(m, hashes[:k], whole), ref_mth(hashes[k:])]
    return [*ref_subproof(m - k, hashes[k:], False), ref_mth(hashes[:k])]


def ref_proof(m: int, hashes: list[bytes]) -> list[bytes]:
    return ref_subproof(m, hashes, True)


def refusal(call: Any, *arguments: Any) -> str:
    with pytest.raises(ProofError) as refused:
        call(*arguments)
    return str(refused.value)


def flipped(proof: list[bytes], position: int) -> list[bytes]:
    changed = bytearray(proof[position])
    changed[0] ^= 0x08
    return [*proof[:position], bytes(changed), *proof[position + 1 :]]


class TestKnownAnswers:
    def test_leaf_and_node_hashes_are_those_of_the_reference_tree(self) -> None:
        # Given the reference's 8 leaves and every node of their tree, level by level
        levels = [unhex(level) for level in VECTORS["levels"]]

        # Then leaves hash with the 0x00 prefix, nodes with 0x01, and the empty tree is SHA-256("")
        assert levels[0] == LEAVES
        for below, level in itertools.pairwise(levels):
            assert [node_hash(below[i], below[i + 1]) for i in range(0, len(below), 2)] == level
        assert EMPTY_ROOT.hex() == VECTORS["roots"][0]

    def test_the_roots_of_sizes_0_to_8_are_the_reference_roots(self) -> None:
        # Given a tree of the 8 leaves
        tree = Tree(LEAVES)

        # Then the root at each size, the root of that many leaves and a frontier's root agree with it
        frontier = Frontier()
        for size, expected in enumerate(VECTORS["roots"]):
            assert tree.root(size).hex() == expected
            assert root(LEAVES[:size]).hex() == expected
            assert frontier.root().hex() == expected
            if size < len(LEAVES):
                frontier.append(LEAVES[size])

    def test_frontiers_hold_the_reference_compact_ranges(self) -> None:
        # Given the 8 leaves appended one by one
        frontier = Frontier()
        for size, expected in enumerate(VECTORS["compact"]):
            # Then the frontier holds the hashes of the perfect subtrees, largest first
            assert [value.hex() for value in frontier.hashes] == expected
            assert [value.hex() for value in Tree(LEAVES).frontier(size).hashes] == expected
            if size < len(LEAVES):
                frontier.append(LEAVES[size])

    @pytest.mark.parametrize(
        "case", VECTORS["inclusion"], ids=lambda case: f"{case['index']}of{case['size']}"
    )
    def test_inclusion_proofs_are_the_reference_proofs_and_verify(self, case: dict[str, Any]) -> None:
        # Given the reference's inclusion proof
        index, size = case["index"], case["size"]

        # When the tree makes its own
        proof = Tree(LEAVES).inclusion_proof(index, size)

        # Then they are the same, and it verifies against the reference root
        assert [value.hex() for value in proof] == case["proof"]
        verify_inclusion(LEAVES[index], index, size, proof, bytes.fromhex(VECTORS["roots"][size]))

    @pytest.mark.parametrize(
        "case", VECTORS["consistency"], ids=lambda case: f"{case['old_size']}to{case['new_size']}"
    )
    def test_consistency_proofs_are_the_reference_proofs_and_verify(self, case: dict[str, Any]) -> None:
        # Given the reference's consistency proof
        old_size, new_size = case["old_size"], case["new_size"]

        # When the tree makes its own
        proof = Tree(LEAVES).consistency_proof(old_size, new_size)

        # Then they are the same, and it verifies against the reference roots
        assert [value.hex() for value in proof] == case["proof"]
        roots = unhex(VECTORS["roots"])
        verify_consistency(old_size, new_size, roots[old_size], roots[new_size], proof)

    # Why each check the reference refuses is refused here (its "don't care" roots are 12 bytes).
    REFUSED = {
        "consistency check on empty tree (size1 is zero) is useless": f"0 to 1: {NOT_FROM_0}",
        "roots do not match and sizes are zero": f"0 to 0: {NOT_FROM_0}",
        "roots do not not match and sizes are one": "1 to 1: the new root is 12 bytes, expected 32",
        "size1 is greater than size2 again": "2 to 1: the old size is larger than the new one",
        "size1 is greater than size2": "1 to 0: the old size is larger than the new one",
        "size1 is zero and does not equal size2": f"0 to 1: {NOT_FROM_0}",
        "size1 is zero and size2 is not zero": f"0 to 1: {NOT_FROM_0}",
        "sizes are equal (one) but roots are not": "1 to 1: the old root is 12 bytes, expected 32",
        "sizes are equal (zero) and proof is empty": f"0 to 0: {NOT_FROM_0}",
        "sizes are equal (zero) but roots are not": f"0 to 0: {NOT_FROM_0}",
        "sizes do not watch and proof is empty": "1 to 2: the old root is 12 bytes, expected 32",
        "sizes match but proof is not empty and sizes are one": "1 to 1 has 1 hashes, expected 0",
        "sizes match but proof is not empty and sizes are zero": f"0 to 0: {NOT_FROM_0}",
    }

    @pytest.mark.parametrize("case", VECTORS["refused_consistency"], ids=lambda case: case["desc"])
    def test_what_the_reference_refuses_is_refused(self, case: dict[str, Any]) -> None:
        # Given a consistency check the reference refuses (sizes 0, sizes backwards, roots that differ)
        arguments = (
            case["old_size"],
            case["new_size"],
            bytes.fromhex(case["old_root"]),
            bytes.fromhex(case["new_root"]),
            unhex(case["proof"]),
        )

        # Then it is refused here too, saying why
        assert (
            refusal(verify_consistency, *arguments) == f"consistency proof from {self.REFUSED[case['desc']]}"
        )


class TestProofsAgainstTheDefinition:
    TREE = Tree(leaves_of(64))

    @pytest.mark.parametrize("size", range(1, 65))
    def test_every_inclusion_proof_is_the_rfc_path_and_verifies(self, size: int) -> None:
        # Given the first `size` leaves, as a past size of a bigger tree and as a tree of their own
        leaves = leaves_of(size)
        own = Tree(leaves)
        expected_root = ref_mth(leaves)
        assert self.TREE.root(size) == own.root(size) == expected_root

        for index in range(size):
            # When each leaf's inclusion proof is made
            proof = self.TREE.inclusion_proof(index, size)

            # Then it is PATH(index, D[size]) and verifies against the root
            assert proof == own.inclusion_proof(index, size) == ref_path(index, leaves)
            verify_inclusion(leaves[index], index, size, proof, expected_root)

    @pytest.mark.parametrize("new_size", range(1, 65))
    def test_every_consistency_proof_is_the_rfc_proof_and_verifies(self, new_size: int) -> None:
        # Given the first `new_size` leaves
        leaves = leaves_of(new_size)
        own = Tree(leaves)

        for old_size in range(1, new_size + 1):
            # When the proof from each older size is made
            proof = self.TREE.consistency_proof(old_size, new_size)

            # Then it is PROOF(old_size, D[new_size]) and verifies between the two roots
            assert proof == own.consistency_proof(old_size, new_size) == ref_proof(old_size, leaves)
            verify_consistency(old_size, new_size, ref_mth(leaves[:old_size]), ref_mth(leaves), proof)

    @pytest.mark.parametrize("leaf_count", [1023, 1024, 1025, 3000])
    def test_random_sizes_and_indexes_of_larger_trees(self, leaf_count: int) -> None:
        # Given a larger tree and a seeded sample of its past sizes and their leaves
        leaves = leaves_of(leaf_count, salt="large ")
        tree = Tree(leaves)
        draw = random.Random(9162 + leaf_count)

        for _ in range(12):
            size = draw.randint(1, leaf_count)
            old_size = draw.randint(1, size)
            index = draw.randrange(size)
            root_then = ref_mth(leaves[:size])

            # Then proofs, roots and frontiers are those of the definition, and verify
            assert tree.root(size) == root_then
            assert tree.frontier(size).root() == root_then
            inclusion = tree.inclusion_proof(index, size)
            assert inclusion == ref_path(index, leaves[:size])
            verify_inclusion(leaves[index], index, size, inclusion, root_then)
            consistency = tree.consistency_proof(old_size, size)
            assert consistency == ref_proof(old_size, leaves[:size])
            verify_consistency(old_size, size, tree.root(old_size), root_then, consistency)


class TestTamperedInclusion:
    LEAVES = leaves_of(12)
    TREE = Tree(LEAVES)
    ROOT = TREE.root(12)
    PROOF = TREE.inclusion_proof(5, 12)

    def verify(self, **changes: Any) -> str:
        arguments: dict[str, Any] = {
            "leaf": self.LEAVES[5],
            "index": 5,
            "size": 12,
            "proof": self.PROOF,
            "root_hash": self.ROOT,
        }
        arguments.update(changes)
        with pytest.raises(ProofError) as refused:
            verify_inclusion(**arguments)
        return str(refused.value)

    def test_the_untouched_proof_verifies(self) -> None:
        verify_inclusion(self.LEAVES[5], 5, 12, self.PROOF, self.ROOT)
        assert len(self.PROOF) == 4

    @pytest.mark.parametrize("position", range(4))
    def test_a_flipped_bit_in_any_hash_is_refused(self, position: int) -> None:
        message = self.verify(proof=flipped(self.PROOF, position))
        assert message == "inclusion proof for leaf 5 of 12 does not lead to the root"

    def test_a_dropped_or_added_hash_is_refused_by_count(self) -> None:
        assert (
            self.verify(proof=self.PROOF[:-1]) == "inclusion proof for leaf 5 of 12 has 3 hashes, expected 4"
        )
        assert (
            self.verify(proof=self.PROOF[1:]) == "inclusion proof for leaf 5 of 12 has 3 hashes, expected 4"
        )
        added = [*self.PROOF, self.ROOT]
        assert self.verify(proof=added) == "inclusion proof for leaf 5 of 12 has 5 hashes, expected 4"

    def test_a_wrong_index_is_refused(self) -> None:
        assert self.verify(index=4) == "inclusion proof for leaf 4 of 12 does not lead to the root"
        assert self.verify(index=7) == "inclusion proof for leaf 7 of 12 does not lead to the root"
        assert self.verify(index=11) == "inclusion proof for leaf 11 of 12 has 4 hashes, expected 3"
        assert self.verify(index=12) == (
            "inclusion proof for leaf 12 of 12: index out of range, the leaves are 0 to 11"
        )
        assert self.verify(index=-1) == (
            "inclusion proof for leaf -1 of 12: index out of range, the leaves are 0 to 11"
        )

    def test_a_wrong_size_is_refused(self) -> None:
        # Another checkpoint's size and root, or the size alone changed
        assert self.verify(size=13, root_hash=Tree(leaves_of(13)).root(13)) == (
            "inclusion proof for leaf 5 of 13 does not lead to the root"
        )
        assert self.verify(size=24) == "inclusion proof for leaf 5 of 24 has 4 hashes, expected 5"
        assert self.verify(size=6) == "inclusion proof for leaf 5 of 6 has 4 hashes, expected 2"
        assert self.verify(size=0) == "inclusion proof for leaf 5 of 0: a tree of size 0 has no leaves"

    def test_a_wrong_root_or_leaf_is_refused(self) -> None:
        assert self.verify(root_hash=self.TREE.root(11)) == (
            "inclusion proof for leaf 5 of 12 does not lead to the root"
        )
        assert (
            self.verify(leaf=self.LEAVES[4]) == "inclusion proof for leaf 5 of 12 does not lead to the root"
        )

    def test_hashes_of_the_wrong_length_are_named(self) -> None:
        short = [*self.PROOF[:2], self.PROOF[2][:31], self.PROOF[3]]
        assert self.verify(proof=short) == "inclusion proof for leaf 5 of 12: hash 2 is 31 bytes, expected 32"
        assert (
            self.verify(root_hash=b"") == "inclusion proof for leaf 5 of 12: the root is 0 bytes, expected 32"
        )
        assert self.verify(leaf=b"record") == (
            "inclusion proof for leaf 5 of 12: the leaf hash is 6 bytes, expected 32"
        )

    def test_a_one_leaf_tree_proves_its_leaf_with_no_hashes(self) -> None:
        verify_inclusion(self.LEAVES[0], 0, 1, [], self.LEAVES[0])
        assert refusal(verify_inclusion, self.LEAVES[1], 0, 1, [], self.LEAVES[0]) == (
            "inclusion proof for leaf 0 of 1 does not lead to the root"
        )


class TestTamperedConsistency:
    # 6 to 8 (the old size not a power of two, so the proof starts with the old tree's last node)
    # and 2 to 5 (a power of two: the old root is the first node and is left out of the proof).
    ROOTS = unhex(VECTORS["roots"])
    PROOF_6_TO_8 = Tree(LEAVES).consistency_proof(6, 8)
    PROOF_2_TO_5 = Tree(LEAVES).consistency_proof(2, 5)

    def verify(self, old_size: int, new_size: int, proof: list[bytes], **roots: bytes) -> str:
        """Refusal of ``proof`` between the reference checkpoints of the sizes, unless roots are given."""
        old_root = roots.get("old_root", self.ROOTS[max(0, old_size)])
        new_root = roots.get("new_root", self.ROOTS[min(8, new_size)])
        return refusal(verify_consistency, old_size, new_size, old_root, new_root, proof)

    def test_the_untouched_proofs_verify(self) -> None:
        verify_consistency(6, 8, self.ROOTS[6], self.ROOTS[8], self.PROOF_6_TO_8)
        verify_consistency(2, 5, self.ROOTS[2], self.ROOTS[5], self.PROOF_2_TO_5)
        assert (len(self.PROOF_6_TO_8), len(self.PROOF_2_TO_5)) == (3, 2)

    @pytest.mark.parametrize(("position", "side"), [(0, "old"), (1, "new"), (2, "old")])
    def test_a_flipped_bit_names_the_root_it_breaks(self, position: int, side: str) -> None:
        # The old tree's own nodes (its last node, its left half) lead to both roots; old is checked first
        message = self.verify(6, 8, flipped(self.PROOF_6_TO_8, position))
        assert message == f"consistency proof from 6 to 8 does not lead to the {side} root"

    @pytest.mark.parametrize("position", range(2))
    def test_a_flipped_bit_after_a_power_of_two_breaks_the_new_root(self, position: int) -> None:
        message = self.verify(2, 5, flipped(self.PROOF_2_TO_5, position))
        assert message == "consistency proof from 2 to 5 does not lead to the new root"

    def test_a_dropped_or_added_hash_is_refused_by_count(self) -> None:
        proof = self.PROOF_6_TO_8
        assert self.verify(6, 8, proof[:-1]) == "consistency proof from 6 to 8 has 2 hashes, expected 3"
        assert (
            self.verify(6, 8, [*proof, proof[0]]) == "consistency proof from 6 to 8 has 4 hashes, expected 3"
        )
        assert self.verify(6, 8, []) == "consistency proof from 6 to 8 has 0 hashes, expected 3"

    def test_wrong_sizes_are_refused(self) -> None:
        proof = self.PROOF_6_TO_8
        assert self.verify(5, 8, proof) == "consistency proof from 5 to 8 has 3 hashes, expected 4"
        assert self.verify(7, 8, proof) == "consistency proof from 7 to 8 has 3 hashes, expected 4"
        assert self.verify(6, 16, proof) == "consistency proof from 6 to 16 has 3 hashes, expected 4"
        # The checkpoint of 7 instead of 8: the proof has the same shape but another right edge
        assert self.verify(6, 7, proof) == "consistency proof from 6 to 7 does not lead to the new root"
        assert (
            self.verify(2, 6, self.PROOF_2_TO_5)
            == "consistency proof from 2 to 6 does not lead to the new root"
        )

    def test_wrong_roots_are_named(self) -> None:
        proof = self.PROOF_6_TO_8
        assert self.verify(6, 8, proof, old_root=self.ROOTS[5]) == (
            "consistency proof from 6 to 8 does not lead to the old root"
        )
        assert self.verify(6, 8, proof, new_root=self.ROOTS[7]) == (
            "consistency proof from 6 to 8 does not lead to the new root"
        )
        # A power-of-two old root is where the walk starts: a wrong one shows at the new root
        assert self.verify(2, 5, self.PROOF_2_TO_5, old_root=self.ROOTS[3]) == (
            "consistency proof from 2 to 5 does not lead to the new root"
        )
        assert self.verify(6, 8, proof, old_root=b"\x00" * 31) == (
            "consistency proof from 6 to 8: the old root is 31 bytes, expected 32"
        )

    def test_equal_sizes_need_an_empty_proof_and_one_root(self) -> None:
        verify_consistency(5, 5, self.ROOTS[5], self.ROOTS[5], [])
        assert self.verify(5, 5, [self.ROOTS[5]]) == "consistency proof from 5 to 5 has 1 hashes, expected 0"
        assert self.verify(5, 5, [], old_root=self.ROOTS[4]) == (
            "consistency proof from 5 to 5: the same size has two different roots"
        )

    def test_sizes_no_proof_can_join_are_refused(self) -> None:
        assert self.verify(0, 8, []) == f"consistency proof from 0 to 8: {NOT_FROM_0}"
        assert self.verify(8, 6, self.PROOF_6_TO_8) == (
            "consistency proof from 8 to 6: the old size is larger than the new one"
        )
        assert self.verify(-1, 8, []) == "consistency proof from -1 to 8: sizes cannot be negative"


class TestTreeRequests:
    def test_sizes_and_indexes_the_tree_does_not_have_are_refused(self) -> None:
        # Given a tree of the 8 leaves
        tree = Tree(LEAVES)

        # Then sizes beyond it, leaves beyond a size and old sizes no proof starts from are refused
        assert refusal(tree.root, 9) == "the tree has 8 leaves: size 9 is out of range"
        assert refusal(tree.inclusion_proof, 0, 9) == "the tree has 8 leaves: size 9 is out of range"
        assert refusal(tree.inclusion_proof, 5, 5) == "no inclusion proof for leaf 5 of 5: index out of range"
        assert refusal(tree.consistency_proof, 0, 5) == f"no consistency proof from 0 to 5: {NOT_FROM_0}"
        assert refusal(tree.consistency_proof, 6, 5) == (
            "no consistency proof from 6 to 5: the old size is larger than the new one"
        )
        assert tree.consistency_proof(5, 5) == []

    def test_an_empty_tree_has_the_empty_root(self) -> None:
        assert Tree([]).root(0) == root([]) == EMPTY_ROOT
        assert len(Tree([])) == 0

    def test_leaf_hashes_of_the_wrong_length_are_refused(self) -> None:
        with pytest.raises(ValueError, match=r"^leaf hash 2 is 31 bytes, expected 32$"):
            Tree([*LEAVES[:2], LEAVES[2][:31]])

    def test_leaves_are_read_back_by_index(self) -> None:
        tree = Tree(LEAVES)
        assert [tree.leaf(index) for index in range(8)] == LEAVES
        with pytest.raises(IndexError, match=r"^no leaf 8 in a tree of 8$"):
            tree.leaf(8)


class TestFrontier:
    def test_after_each_append_the_root_is_that_of_the_leaves_so_far(self) -> None:
        # Given leaves appended one at a time
        leaves = leaves_of(70)
        frontier = Frontier()
        for count, leaf in enumerate(leaves, start=1):
            frontier.append(leaf)

            # Then the size, the root and the number of hashes follow the leaves
            assert frontier.size == count
            assert frontier.root() == root(leaves[:count]) == ref_mth(leaves[:count])
            assert len(frontier.hashes) == bin(count).count("1")

    def test_a_json_round_trip_keeps_it(self) -> None:
        # Given a frontier at every size from 0 to 40
        leaves = leaves_of(40)
        frontier = Frontier()
        for count in range(41):
            # When it goes through its JSON form as text
            copy = Frontier.from_json(json.loads(json.dumps(frontier.to_json())))

            # Then it is the same frontier, and it goes on appending the same way
            assert copy == frontier
            assert copy.to_json() == {"size": count, "hashes": [value.hex() for value in frontier.hashes]}
            if count < 40:
                copy.append(leaves[count])
                frontier.append(leaves[count])
                assert copy.root() == frontier.root() == ref_mth(leaves[: count + 1])

    def test_a_batch_appended_to_a_tree_it_does_not_hold_gives_the_whole_root(self) -> None:
        # Given the stored right edge of a tree of 37 leaves, and a batch of 28 more
        leaves = leaves_of(65)
        stored = Tree(leaves[:37]).frontier(37).to_json()

        # When the batch is appended to the edge read back
        frontier = Frontier.from_json(stored)
        frontier.extend(leaves[37:])

        # Then its root is that of all 65 leaves
        assert frontier.size == 65
        assert frontier.root() == Tree(leaves).root(65) == ref_mth(leaves)

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"size": 5, "hashes": ["00" * 32]}, "^a frontier of size 5 has 2 hashes, not 1$"),
            ({"size": 1, "hashes": ["zz" * 32]}, "^a frontier's hashes are a list of hex strings$"),
            ({"size": 1, "hashes": ["00" * 31]}, "^frontier hash 0 is 31 bytes, expected 32$"),
            ({"size": "1", "hashes": ["00" * 32]}, "^a frontier's size is a whole number, not '1'$"),
            ({"size": -1, "hashes": []}, "^a frontier cannot have size -1$"),
            ({"size": 1}, "^a frontier's hashes are a list of hex strings$"),
        ],
    )
    def test_a_damaged_json_form_is_refused(self, data: dict[str, Any], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            Frontier.from_json(data)
