"""Pure domain: models, rules and state machines. No boto3, no I/O."""
