// gen's MCP server driven by the official TypeScript SDK
// (shared/nodetools.MCPPackage), for mcp_test.go: what an MCP host does.
// Over both transports, the stdio server started as a host starts it (a
// child process from the README's config block) and the service's /mcp
// (Streamable HTTP with a bearer key), it initializes, lists the tools,
// starts a generation, waits for it with progress notifications and
// downloads the video; then it makes the refusals the Go test checks.
// It reads its configuration as JSON on stdin and writes a JSON report on
// stdout.
"use strict";
const fs = require("fs");
const path = require("path");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const out = { runs: {}, refusals: {}, stdioRefusals: {} };

  // connect starts a client over one transport: the stdio server of the
  // config block, or /mcp with a key.
  async function connect(kind, key) {
    const client = new Client({ name: "gen-mcp-test", version: "1.0.0" });
    let transport;
    if (kind === "stdio") {
      const server = cfg.stdio;
      transport = new StdioClientTransport({ command: server.command, args: server.args, env: server.env, stderr: "pipe" });
      let log = "";
      transport.stderr.on("data", (d) => (log += d));
      client.stdioLog = () => log;
    } else {
      transport = new StreamableHTTPClientTransport(new URL(cfg.mcpURL), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      });
    }
    await client.connect(transport);
    return client;
  }

  // call is a tool's result, or what the SDK threw.
  async function call(client, name, args, options) {
    try {
      const res = await client.callTool({ name, arguments: args }, undefined, options);
      return { isError: !!res.isError, structured: res.structuredContent, content: res.content };
    } catch (e) {
      return { threw: String(e && e.message), code: e && e.code };
    }
  }

  for (const kind of ["stdio", "http"]) {
    const client = await connect(kind, cfg.key);
    const run = { server: client.getServerVersion(), progress: [] };
    const tools = await client.listTools();
    run.tools = tools.tools.map((t) => ({ name: t.name, input: t.inputSchema.type, output: t.outputSchema && t.outputSchema.type }));
    run.models = await call(client, "list_models", {});
    run.started = await call(client, "start_text_to_video", {
      prompt: `a paper lantern drifting on a river (${kind})`, model: cfg.model, durationSeconds: cfg.duration, generateAudio: false,
    });
    const taskId = run.started.structured && run.started.structured.started && run.started.structured.started.taskId;
    run.taskId = taskId;
    run.waited = await call(client, "wait_for_task", { taskId, timeoutSeconds: 120 }, {
      onprogress: (p) => run.progress.push(p),
      timeout: 150000,
      resetTimeoutOnProgress: true,
    });
    const task = run.waited.structured && run.waited.structured.task;
    const video = task && task.videos && task.videos[0];
    run.links = (run.waited.content || []).filter((c) => c.type === "resource_link").map((c) => ({ uri: c.uri, mimeType: c.mimeType }));
    if (video) {
      // The link the agent hands on: no key, as a person's browser opens it.
      const res = await fetch(video.url);
      run.download = { status: res.status, contentType: res.headers.get("content-type") };
      const file = path.join(cfg.dir, `${kind}.mp4`);
      fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      run.download.file = file;
    }
    if (kind === "stdio") {
      // The same refusals come back over stdio as over HTTP.
      out.stdioRefusals.badParameter = await call(client, "start_text_to_video", { prompt: "five seconds", model: cfg.model, durationSeconds: 5 });
      out.stdioRefusals.notFound = await call(client, "get_task", { taskId: cfg.otherTaskID });
      run.log = client.stdioLog();
    }
    out.runs[kind] = run;
    await client.close();
  }

  // Refusals through /mcp, each with the key that meets it. A refusal
  // before any tool (API Gateway's usage plan on AWS) is what the SDK
  // threw.
  const refuse = async (name, key, f) => {
    let client;
    try {
      client = await connect("http", key);
    } catch (e) {
      out.refusals[name] = { threw: String(e && e.message), code: e && e.code };
      return;
    }
    out.refusals[name] = await f(client);
    await client.close();
  };
  await refuse("noCredits", cfg.poorKey, (c) =>
    call(c, "start_text_to_video", { prompt: "too dear", model: cfg.model, durationSeconds: cfg.duration, generateAudio: false }));
  await refuse("badParameter", cfg.key, (c) =>
    call(c, "start_text_to_video", { prompt: "five seconds", model: cfg.model, durationSeconds: 5 }));
  await refuse("wrongType", cfg.key, (c) =>
    call(c, "start_text_to_video", { prompt: "four seconds", model: cfg.model, durationSeconds: "4" }));
  await refuse("startRate", cfg.startLimitedKey, async (c) => {
    const results = [];
    for (let i = 0; i < 2; i++) {
      results.push(await call(c, "start_text_to_video", {
        prompt: `one start a minute (${i})`, model: cfg.model, durationSeconds: cfg.duration, generateAudio: false,
      }));
    }
    return results;
  });
  await refuse("requestRate", cfg.requestLimitedKey, async (c) => {
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await call(c, "list_models", {}));
    return results;
  });
  await refuse("otherTenant", cfg.key, (c) => call(c, "get_task", { taskId: cfg.otherTaskID }));
  await refuse("spendingCap", cfg.cappedKey, (c) =>
    call(c, "start_text_to_video", { prompt: "over the cap", model: cfg.model, durationSeconds: cfg.duration, generateAudio: false }));

  // A wrong key never reaches a tool: the transport's 401.
  try {
    await connect("http", "gen_" + "0".repeat(40));
    out.wrongKey = { connected: true };
  } catch (e) {
    out.wrongKey = { threw: String(e && e.message), code: e && e.code };
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
