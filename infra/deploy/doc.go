// Package deploy holds the tests of the AWS deployment, which has no Go
// code of its own: template.yaml is checked against the code and the
// contract (every reference resolves, every function's code exists, every
// route of the contract is there, the usage plans carry Set B's figures),
// and statemachine/generation.asl.json is validated with asl-validator and
// run end to end in aws-local-stepfunctions, its Lambda tasks routed to the
// real Go step handlers.
//
// The Node.js tools are installed on first use into a cache directory
// outside the module ($GEN_NODE_CACHE, default ~/.cache/gen/node), with
// npm; GEN_SKIP_NODE=1 skips the tests that need them.
package deploy
