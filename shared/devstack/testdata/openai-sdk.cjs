// The OpenAI-compatible videos API driven by the official `openai` SDK
// (shared/nodetools.OpenAIPackage), for openai_sdk_test.go: what a
// customer's TypeScript would do. openai-sdk-run.cjs is its harness.
"use strict";
const fs = require("fs");
const path = require("path");
const { run } = require("./openai-sdk-run.cjs");
const { toFile } = require("openai");

run(async ({ cfg, client, out, poll, error, OpenAI }) => {
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

  await error("auth", () => new OpenAI({ baseURL: cfg.baseURL, apiKey: "gen_not_a_key", maxRetries: 0 }).videos.list());
  await error("badRequest", () => client.videos.create({ prompt: "too long", seconds: "12" }));
  await error("notFound", () => client.videos.retrieve(fromImage.id));
  const limited = new OpenAI({ baseURL: cfg.baseURL, apiKey: cfg.limitedKey, maxRetries: 0 });
  await error("rateLimit", async () => {
    for (let i = 0; i < 100; i++) await limited.videos.list({ limit: 1 });
  });
});
