"""Adapters: the only modules that talk to AWS (or other providers)."""
