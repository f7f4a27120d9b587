// The access check's second opinion (devkit/phoneid_dev/access/second_opinion.py): every request of
// one batch evaluated by @cloud-copilot/iam-simulate against its function's identity policy.
//
//   node tools/iam-simulate/simulate.mjs BATCH.json   ->   stdout: {"simulator": ..., "decisions": [...]}
//
// The batch: {"policies": {id: policy document}, "requests": [{id, policy, principal, action, resource,
// account, context, expected}]}. Each decision: {id, decision: Allowed | ImplicitlyDenied |
// ExplicitlyDenied, ignored: [context keys the simulator set aside]} with, where it differs from
// `expected` (our evaluator's), `statements`: how each statement naming the action was judged; or
// {id, error} when the simulator refused the request. Identity policies only: no resource policy, key
// policy, SCP or boundary (the access check's own scope), so the decision is the identity analysis's.
// A failure of the batch itself exits non-zero with its reason on stderr.
import { readFileSync } from 'node:fs'
import { runSimulation } from '@cloud-copilot/iam-simulate'

const SIMULATOR = '@cloud-copilot/iam-simulate'

// Speed, not behaviour: iam-simulate matches each request's ARN against its action's resource types
// character by character with `a.localeCompare(b, undefined, options)`, which builds an Intl.Collator
// on every call (about 40 % of a batch's time). ECMA-402 defines that call as a comparison by
// `new Intl.Collator(locales, options)`, so one collator per options object answers the same: kept
// here, and checked against the built-in on the characters ARNs hold before any request is decided.
const builtInLocaleCompare = String.prototype.localeCompare
const collators = new Map()
function localeCompare(that, locales, options) {
  if (locales !== undefined || options === undefined || options === null || typeof options !== 'object') {
    return builtInLocaleCompare.call(this, that, locales, options)
  }
  const key = JSON.stringify(options)
  let collator = collators.get(key)
  if (collator === undefined) {
    collator = new Intl.Collator(undefined, options)
    collators.set(key, collator)
  }
  return collator.compare(String(this), String(that))
}

function useCachedCollators() {
  const characters = [...'aAáÁzZ09:/-_.*?$ {}éE']
  for (const sensitivity of ['base', 'accent', 'case', 'variant']) {
    for (const first of characters) {
      for (const second of characters) {
        const expected = builtInLocaleCompare.call(first, second, undefined, { sensitivity })
        if (localeCompare.call(first, second, undefined, { sensitivity }) !== expected) {
          throw new Error(`a kept Intl.Collator compares ${first} and ${second} otherwise than localeCompare`)
        }
      }
    }
  }
  String.prototype.localeCompare = localeCompare
}

// iam-simulate 0.1.173 sets aside every kms:EncryptionContext:<name> key of a request: its action data
// names the key `kms:EncryptionContext:${EncryptionContextKey}`, and it recognizes a key of that kind
// only in the `/` form (aws:PrincipalTag/<name>). Such a key goes to it, in the request and in every
// policy alike, as aws:RequestTag/<name>: a global String key it keeps, of the same type, compared by
// the same operator with the same values. `checkEncryptionContextWorkaround` fails the batch once the
// simulator keeps the key itself, so the renaming goes when it is no longer needed.
const ENCRYPTION_CONTEXT = /^kms:EncryptionContext:(.+)$/i
const STANDS_IN = 'aws:RequestTag/'

function renamedKey(key) {
  const found = ENCRYPTION_CONTEXT.exec(key)
  return found ? STANDS_IN + found[1] : key
}

// A key of the simulator's explanation as the policy wrote it.
function writtenKey(key) {
  return key.toLowerCase().startsWith(STANDS_IN.toLowerCase())
    ? 'kms:EncryptionContext:' + key.slice(STANDS_IN.length)
    : key
}

function renamedContext(context) {
  const renamed = {}
  for (const [key, value] of Object.entries(context)) {
    if (key.toLowerCase().startsWith(STANDS_IN.toLowerCase())) {
      throw new Error(`the request carries ${key}, which stands in for kms:EncryptionContext keys here`)
    }
    renamed[renamedKey(key)] = value
  }
  return renamed
}

function renamedPolicy(policy) {
  const statements = Array.isArray(policy.Statement) ? policy.Statement : [policy.Statement]
  return {
    ...policy,
    Statement: statements.map((statement) => {
      if (!statement.Condition) return statement
      const condition = {}
      for (const [operator, entries] of Object.entries(statement.Condition)) {
        condition[operator] = {}
        for (const [key, values] of Object.entries(entries)) {
          if (key.toLowerCase().startsWith(STANDS_IN.toLowerCase())) {
            throw new Error(`a policy conditions on ${key}, which stands in for kms:EncryptionContext keys here`)
          }
          condition[operator][renamedKey(key)] = values
        }
      }
      return { ...statement, Condition: condition }
    })
  }
}

async function checkEncryptionContextWorkaround() {
  const key = 'arn:aws:kms:us-east-1:111122223333:key/00000000-0000-0000-0000-000000000000'
  const probe = await runSimulation(
    {
      request: {
        principal: 'arn:aws:iam::111122223333:role/probe',
        action: 'kms:Decrypt',
        resource: { resource: key, accountId: '111122223333' },
        contextVariables: { 'kms:EncryptionContext:use': 'probe' }
      },
      identityPolicies: [],
      serviceControlPolicies: [],
      resourceControlPolicies: []
    },
    {}
  )
  if (probe.resultType === 'error' || !probe.result.ignoredContextKeys?.includes('kms:EncryptionContext:use')) {
    throw new Error(
      `${SIMULATOR} now keeps kms:EncryptionContext:<name> in a request's context: ` +
        'remove the renaming to aws:RequestTag/<name> from tools/iam-simulate/simulate.mjs'
    )
  }
}

// How each statement that names the action was judged (the explanation of a decision).
function judged(analysis) {
  const identity = analysis?.identityAnalysis
  if (!identity) return []
  const all = [...identity.allowStatements, ...identity.denyStatements, ...identity.unmatchedStatements]
  return all
    .filter((each) => each.actionMatch)
    .map((each) => ({
      statement: Number(each.explain.identifier) - 1,
      effect: each.explain.effect,
      matches: each.explain.matches,
      resource: each.resourceMatch,
      conditions: (each.explain.conditions ?? []).map((condition) => ({
        operator: condition.operator,
        key: writtenKey(condition.conditionKeyValue),
        matches: condition.matches,
        missing: Boolean(condition.failedBecauseMissing)
      }))
    }))
}

// The identity policy's decision: of the one simulation, or of each resource a wildcard stood for
// (as iam-simulate combines them: one allowed allows; all explicitly denied deny explicitly).
function identityDecision(response) {
  const analyses =
    response.resultType === 'single' ? [response.result.analysis] : response.results.map((each) => each.analysis)
  const results = analyses.map((analysis) => analysis.identityAnalysis?.result ?? 'ImplicitlyDenied')
  const decision = results.includes('Allowed')
    ? 'Allowed'
    : results.length > 0 && results.every((result) => result === 'ExplicitlyDenied')
      ? 'ExplicitlyDenied'
      : 'ImplicitlyDenied'
  const ignored =
    response.resultType === 'single'
      ? response.result.ignoredContextKeys ?? []
      : [...new Set(response.results.flatMap((each) => each.ignoredContextKeys ?? []))]
  return { decision, ignored, analyses }
}

async function decide(request, policies) {
  const response = await runSimulation(
    {
      request: {
        principal: request.principal,
        action: request.action,
        resource: { resource: request.resource, accountId: request.account },
        contextVariables: renamedContext(request.context)
      },
      // A role with no statement at all is no policy (iam-policy refuses an empty Statement).
      identityPolicies: policies[request.policy].Statement.length
        ? [{ name: request.policy, policy: policies[request.policy] }]
        : [],
      serviceControlPolicies: [],
      resourceControlPolicies: []
    },
    {}
  )
  if (response.resultType === 'error') {
    return { id: request.id, error: JSON.stringify(response.errors) }
  }
  const { decision, ignored, analyses } = identityDecision(response)
  const answer = { id: request.id, decision, ignored }
  if ((decision === 'Allowed') !== request.expected) {
    answer.statements = analyses.flatMap(judged)
  }
  return answer
}

async function main() {
  const [path] = process.argv.slice(2)
  if (!path) throw new Error('usage: node simulate.mjs BATCH.json')
  const batch = JSON.parse(readFileSync(path, 'utf8'))
  useCachedCollators()
  await checkEncryptionContextWorkaround()
  const policies = Object.fromEntries(
    Object.entries(batch.policies).map(([id, policy]) => [id, renamedPolicy(policy)])
  )
  const decisions = []
  for (const request of batch.requests) {
    decisions.push(await decide(request, policies))
  }
  // The package exports no package.json: it is two levels above the module it resolves to.
  const manifest = new URL('../../package.json', import.meta.resolve(SIMULATOR))
  const version = JSON.parse(readFileSync(manifest, 'utf8')).version
  process.stdout.write(JSON.stringify({ simulator: `${SIMULATOR} ${version}`, decisions }))
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`)
  process.exit(1)
})
