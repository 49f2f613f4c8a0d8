// sfnlocal runs executions of a state machine definition in
// aws-local-stepfunctions, an implementation of the Amazon States Language
// in JavaScript, and prints what happened as JSON. It is driven by
// statemachine_test.go (go test ./infra/deploy/), which installs the
// package and Node.js 22 outside the module and puts them on NODE_PATH.
//
//   node sfnlocal.cjs <definition.json> <spec.json>
//
// spec.json: {"lambdaEndpoint": URL, "executions": [{"name", "input"}]}.
//
// Each Task state's Resource is a Lambda ARN. Instead of calling AWS, the
// task is POSTed to lambdaEndpoint as the Lambda Invoke API takes it
// (/2015-03-31/functions/<function name>/invocations), where the test
// serves the Go step handlers through aws-lambda-go. A function error
// comes back as Lambda reports it, header X-Amz-Function-Error and body
// {"errorType", "errorMessage"}, and is raised here as Step Functions
// raises it: the error name is the errorType, the cause the payload's
// JSON. Retry and Catch then match on the Go type name, as on AWS.
//
// Retry intervals are overridden to 0 ms so that the test does not wait
// for backoff; everything else (matching, MaxAttempts, ResultPath,
// TimeoutSecondsPath, Choice) is the package's own semantics.
'use strict';

const fs = require('node:fs');
const { StateMachine } = require('aws-local-stepfunctions');

function functionName(resource) {
  // arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]
  const parts = resource.split(':');
  if (parts.length < 7 || parts[2] !== 'lambda' || parts[5] !== 'function') {
    throw new Error(`Task resource ${resource} is not a Lambda function ARN`);
  }
  return parts[6];
}

async function invoke(endpoint, resource, input) {
  const url = `${endpoint}/2015-03-31/functions/${encodeURIComponent(functionName(resource))}/invocations`;
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(input) });
  const text = await res.text();
  if (res.status !== 200) {
    // Lambda itself failed: Step Functions names such errors Lambda.*.
    const err = new Error(`invoke ${resource}: HTTP ${res.status}: ${text}`);
    err.name = res.status === 404 ? 'Lambda.ResourceNotFoundException' : 'Lambda.ServiceException';
    throw err;
  }
  if (res.headers.get('x-amz-function-error')) {
    const payload = JSON.parse(text);
    const err = new Error(text);
    err.name = payload.errorType;
    throw err;
  }
  return JSON.parse(text);
}

function summarize(event) {
  const out = { type: event.type };
  if (event.state) out.state = event.state.name;
  if (event.Error !== undefined) out.error = event.Error;
  if (event.Cause !== undefined) out.cause = typeof event.Cause === 'string' ? event.Cause : String(event.Cause);
  if (event.retry) out.attempt = event.retry.attempt;
  if (event.catch) out.next = event.catch.catcher.Next;
  return out;
}

async function main() {
  const [definitionPath, specPath] = process.argv.slice(2);
  const definition = JSON.parse(fs.readFileSync(definitionPath, 'utf8'));
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));

  // The constructor validates the definition (paths and ARNs included).
  const machine = new StateMachine(definition);

  const overrides = { taskResourceLocalHandlers: {}, retryIntervalOverrides: {} };
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type === 'Task') {
      overrides.taskResourceLocalHandlers[name] = (input) => invoke(spec.lambdaEndpoint, state.Resource, input);
    }
    if (state.Retry) {
      overrides.retryIntervalOverrides[name] = 0;
    }
  }

  const results = [];
  for (const ex of spec.executions) {
    const execution = machine.run(ex.input, {
      overrides,
      context: { Execution: { Name: ex.name, Input: ex.input, StartTime: new Date().toISOString() } },
    });
    const events = [];
    const collected = (async () => {
      for await (const event of execution.eventLogs) events.push(summarize(event));
    })();
    const result = { name: ex.name };
    try {
      result.output = await execution.result;
      result.status = 'SUCCEEDED';
    } catch (err) {
      const cause = err.cause ?? err;
      result.status = 'FAILED';
      result.error = cause.name;
      result.cause = cause.message;
    }
    await collected;
    result.events = events;
    results.push(result);
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
