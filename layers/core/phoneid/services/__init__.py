"""Application services: one per capability, composed from ports by ``phoneid.bootstrap``."""
