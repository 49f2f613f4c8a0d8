// The OpenAI-compatible videos API driven by the official `openai` SDK
// (shared/nodetools.OpenAIPackage), for openai_sdk_test.go: what a
// customer's TypeScript would do. It reads its configuration as JSON on
// stdin and writes a JSON report on stdout; the Go test checks it.
"use strict";
const fs = require("fs");
const path = require("path");
const OpenAI = require("openai");
const { toFile } = require("openai");

async function main() {
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

  const created = await client.videos.create({ prompt: "a lighthouse at dusk", model: cfg.model, seconds: cfg.seconds, size: "1280x720" });
  out.created = created;
  out.done = await poll(created.id);
  const content = await client.videos.downloadContent(created.id);
  out.contentType = content.headers.get("content-type");
  fs.writeFileSync(path.join(cfg.dir, "text.mp4"), Buffer.from(await content.arrayBuffer()));

  const image = await toFile(fs.readFileSync(cfg.image), "frame.png", { type: "image/png" });
  const fromImage = await client.videos.create({ prompt: "the frame comes alive", seconds: "4", size: "1280x720", input_reference: image });
  out.imageDone = await poll(fromImage.id);

  // The contract's task, through the SDK.
  out.contractTask = await client.videos.retrieve(cfg.contractTaskID);

  // Pages of one, by hand with after, then by the SDK's own iteration.
  const first = await client.videos.list({ limit: 1 });
  const second = await client.videos.list({ limit: 1, after: first.last_id });
  out.pages = [first.data.map((v) => v.id), second.data.map((v) => v.id)];
  out.firstHasMore = first.has_more;
  out.listed = [];
  for await (const v of client.videos.list({ limit: 1 })) out.listed.push(v.id);
  // The same oldest first: order=asc, after the previous page's last_id.
  const firstAsc = await client.videos.list({ limit: 1, order: "asc" });
  const secondAsc = await client.videos.list({ limit: 1, order: "asc", after: firstAsc.last_id });
  out.pagesAsc = [firstAsc.data.map((v) => v.id), secondAsc.data.map((v) => v.id)];
  out.firstAscHasMore = firstAsc.has_more;
  out.listedAsc = [];
  for await (const v of client.videos.list({ limit: 1, order: "asc" })) out.listedAsc.push(v.id);

  out.deleted = await client.videos.delete(fromImage.id);

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
  await error("auth", () => new OpenAI({ baseURL: cfg.baseURL, apiKey: "gen_not_a_key", maxRetries: 0 }).videos.list());
  await error("badRequest", () => client.videos.create({ prompt: "too long", seconds: "12" }));
  await error("notFound", () => client.videos.retrieve(fromImage.id));
  const limited = new OpenAI({ baseURL: cfg.baseURL, apiKey: cfg.limitedKey, maxRetries: 0 });
  await error("rateLimit", async () => {
    for (let i = 0; i < 100; i++) await limited.videos.list({ limit: 1 });
  });
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
