"""Application services: one per capability, composed from ports by ``phoneid.wiring``."""
