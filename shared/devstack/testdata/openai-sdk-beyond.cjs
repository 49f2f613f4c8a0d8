// What OpenAI's videos shape has a place for beyond one clip (issue 37),
// driven by the official `openai` SDK (shared/nodetools.OpenAIPackage)
// for openai_sdk_test.go: a 4K size on create, and videos.extend of a
// completed video by its id. openai-sdk-run.cjs is its harness.
"use strict";
const { run } = require("./openai-sdk-run.cjs");

run(async ({ cfg, client, out, poll, error, OpenAI }) => {
  // The SDK's VideoSize lists Sora's four sizes; the field is width x
  // height, and the SDK sends what it is given.
  out.fourK = await client.videos.create({ prompt: "a city at 4k through the SDK", model: cfg.quality, size: "3840x2160", seconds: "8" });
  out.source = await client.videos.create({ prompt: "a fox through the SDK", model: cfg.quality, size: "1280x720", seconds: "8" });
  out.fourKDone = await poll(out.fourK.id);
  out.sourceDone = await poll(out.source.id);
  out.extended = await client.videos.extend({ video: { id: out.source.id }, prompt: "and then the fox runs", seconds: "8" });
  out.extendedDone = await poll(out.extended.id);

  await error("liteFourK", () => client.videos.create({ prompt: "x", model: cfg.lite, size: "3840x2160", seconds: "8" }));
  await error("extendFailed", () => client.videos.extend({ video: { id: cfg.failedID }, prompt: "x", seconds: "8" }));
  await error("extendLength", () => client.videos.extend({ video: { id: out.source.id }, prompt: "x", seconds: "12" }));
  const other = new OpenAI({ baseURL: cfg.baseURL, apiKey: cfg.otherKey, maxRetries: 0 });
  await error("extendOthers", () => other.videos.extend({ video: { id: out.source.id }, prompt: "x", seconds: "8" }));
});
