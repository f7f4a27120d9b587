"""The local stack and its tooling: never imported by Lambda handlers, and left out of the layer."""
