// The harness the OpenAI SDK scripts share (openai-sdk.cjs,
// openai-sdk-beyond.cjs): it reads the configuration as JSON on stdin,
// makes the official `openai` client (shared/nodetools.OpenAIPackage) on
// it, runs the script's body, and writes the report the body filled as
// JSON on stdout, for openai_sdk_test.go to check.
"use strict";
const fs = require("fs");
const OpenAI = require("openai");

function run(body) {
  main(body).catch((e) => {
    process.stderr.write(String(e && e.stack ? e.stack : e));
    process.exit(1);
  });
}

async function main(body) {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const client = new OpenAI({ baseURL: cfg.baseURL, apiKey: cfg.key, maxRetries: 0 });
  const out = { errors: {} };

  // Retrieve until completed: the pinned SDK (openai 7.57.0) has no
  // videos.createAndPoll nor a videos poll helper.
  async function poll(id) {
    for (;;) {
      const v = await client.videos.retrieve(id);
      if (v.status === "completed" || v.status === "failed") return v;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  // error records, under name, the error f made the SDK throw: which of
  // its classes it is, and what it read of the answer (sdkError).
  async function error(name, f) {
    try {
      await f();
      out.errors[name] = "no error";
    } catch (e) {
      out.errors[name] = {
        auth: e instanceof OpenAI.AuthenticationError,
        badRequest: e instanceof OpenAI.BadRequestError,
        rateLimit: e instanceof OpenAI.RateLimitError,
        notFound: e instanceof OpenAI.NotFoundError,
        status: e.status, param: e.param, code: e.code, type: e.type,
        retryAfter: e.headers ? e.headers.get("retry-after") : null,
      };
    }
  }

  await body({ cfg, client, out, poll, error, OpenAI });
  process.stdout.write(JSON.stringify(out));
}

module.exports = { run };
