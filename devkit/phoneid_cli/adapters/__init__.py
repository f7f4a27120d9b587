"""The operator's AWS work that Lambda never does: deployed stacks, dead letters, batch uploads."""
