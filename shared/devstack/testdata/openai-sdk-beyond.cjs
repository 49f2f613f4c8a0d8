// What OpenAI's videos shape has a place for beyond one clip (issue 37),
// driven by the official `openai` SDK (shared/nodetools.OpenAIPackage)
// for openai_sdk_test.go: a 4K size on create, and videos.extend of a
// completed video by its id. It reads its configuration as JSON on stdin
// and writes a JSON report on stdout; the Go test checks it.
"use strict";
const fs = require("fs");
const OpenAI = require("openai");

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const client = new OpenAI({ baseURL: cfg.baseURL, apiKey: cfg.key, maxRetries: 0 });
  const out = { errors: {} };

  async function poll(id) {
    for (;;) {
      const v = await client.videos.retrieve(id);
      if (v.status === "completed" || v.status === "failed") return v;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  // The SDK's VideoSize lists Sora's four sizes; the field is width x
  // height, and the SDK sends what it is given.
  out.fourK = await client.videos.create({ prompt: "a city at 4k through the SDK", model: cfg.quality, size: "3840x2160", seconds: "8" });
  out.source = await client.videos.create({ prompt: "a fox through the SDK", model: cfg.quality, size: "1280x720", seconds: "8" });
  out.fourKDone = await poll(out.fourK.id);
  out.sourceDone = await poll(out.source.id);
  out.extended = await client.videos.extend({ video: { id: out.source.id }, prompt: "and then the fox runs", seconds: "8" });
  out.extendedDone = await poll(out.extended.id);

  async function error(name, f) {
    try {
      await f();
      out.errors[name] = "no error";
    } catch (e) {
      out.errors[name] = {
        badRequest: e instanceof OpenAI.BadRequestError,
        notFound: e instanceof OpenAI.NotFoundError,
        status: e.status, param: e.param, code: e.code, type: e.type,
      };
    }
  }
  await error("liteFourK", () => client.videos.create({ prompt: "x", model: cfg.lite, size: "3840x2160", seconds: "8" }));
  await error("extendFailed", () => client.videos.extend({ video: { id: cfg.failedID }, prompt: "x", seconds: "8" }));
  await error("extendLength", () => client.videos.extend({ video: { id: out.source.id }, prompt: "x", seconds: "12" }));
  const other = new OpenAI({ baseURL: cfg.baseURL, apiKey: cfg.otherKey, maxRetries: 0 });
  await error("extendOthers", () => other.videos.extend({ video: { id: out.source.id }, prompt: "x", seconds: "8" }));
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
