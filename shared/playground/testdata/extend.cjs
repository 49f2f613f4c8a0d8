// The playground's reference images, 4k and extension on a Veo backend,
// driven by backend_test.go (TestPlaygroundReferencesAndExtension): what
// the form offers per model, two starts with reference images (a form's
// file; direct uploads), an extension from a finished card after its
// quote, and an extension refused because another client deleted its
// task meanwhile. Settings as JSON on stdin; a JSON report on stdout.
"use strict";
const fs = require("fs");
const { chromium } = require("playwright-core");

const quality = "gen-3.1-generate-001", fast = "gen-3.1-fast-generate-001", lite = "gen-3.1-lite-generate-001";

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const browser = await chromium.launch({ executablePath: cfg.chromium, headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"] });
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);
  page.on("console", (m) => { if (m.type() === "error") console.error("console:", m.text()); });
  const values = (sel) => page.$$eval(sel + " option", (os) => os.map((o) => o.value));
  const text = (sel) => page.$eval(sel, (e) => e.textContent.trim());
  const refsShown = () => page.$eval(".drop[data-field=referenceImages]", (d) => !d.hidden);
  const report = { resolutions: {}, refsShown: {}, starts: [], completed: [] };

  await page.goto(cfg.base + "/");
  await page.fill("#api-key", cfg.key);
  await page.click("#use-key");
  await page.waitForSelector("#models-table tbody tr");

  // What the form offers, per model, from /models.
  await page.selectOption("#model", quality);
  await page.selectOption("#durationSeconds", "8");
  report.resolutions.quality = await values("#resolution");
  report.refsShown.quality = await refsShown();
  await page.selectOption("#resolution", "4k");
  report.cost4K = await text("#cost");
  await page.selectOption("#durationSeconds", "4");
  report.resolutions.quality4s = await values("#resolution");
  await page.selectOption("#model", lite);
  report.refsShown.lite = await refsShown();
  await page.selectOption("#model", fast);
  await page.selectOption("#durationSeconds", "8");
  report.resolutions.fast = await values("#resolution");
  report.refsShown.fast = await refsShown();
  await page.check("input[name=mode][value=image-to-video]");
  report.refsShown.image = await refsShown();
  await page.check("input[name=mode][value=text-to-video]");

  // A start with one small reference image: a form's file.
  const start = async (prompt) => {
    await page.fill("#prompt", prompt);
    await page.selectOption("#resolution", "720p");
    const answer = page.waitForResponse((r) => r.url().endsWith("/api/gen/text-to-video") && r.request().method() === "POST");
    await page.click("#start");
    const r = await answer;
    const body = await r.json();
    report.starts.push({ status: r.status(), contentType: r.request().headers()["content-type"] || "",
      body: r.request().headers()["content-type"] === "application/json" ? r.request().postData() : "" });
    return body.taskId;
  };
  await page.setInputFiles("#file-referenceImages", [cfg.picture]);
  await page.waitForSelector(".ref-list li");
  report.refsDurations = await values("#durationSeconds");
  report.refsAspects = await values("#aspectRatio");
  report.refsPeople = await values("#personGeneration");
  report.costRefs = await text("#cost");
  await page.fill("#prompt", "the fox in the dress");
  await page.selectOption("#resolution", "720p");
  await (await page.$("#generate-section")).screenshot({ path: cfg.screenshots + "/references.png" });
  const first = await start("the fox in the dress");
  report.firstTaskId = first;

  // Two, one of them large: both go through direct uploads.
  await page.click(".ref-list li button");
  await page.setInputFiles("#file-referenceImages", [cfg.picture, cfg.largePicture]);
  await page.waitForFunction(() => document.querySelectorAll(".ref-list li").length === 2);
  const second = await start("the fox and the noise");

  const card = (id) => `article.task[data-task-id="${id}"]`;
  const completed = async (id) => {
    await page.waitForFunction((sel) => {
      const s = document.querySelector(sel + " .task-status");
      return s && /^(Completed|Failed)/.test(s.textContent);
    }, card(id), { timeout: 60000 });
    return text(card(id) + " .task-status");
  };
  report.completed.push(await completed(first), await completed(second));
  await page.waitForSelector(card(second) + " .extend-task");
  report.extendButtons = await page.$$eval("article.task .extend-task", (bs) => bs.length);

  // Extend the first: the prompt, the quote, the start.
  await page.click(card(first) + " .extend-task");
  await page.waitForSelector("#extend-dialog[open]");
  await page.fill("#extend-prompt", "and then she dances");
  await page.waitForFunction(() => document.querySelector("#extend-quote").textContent.startsWith("Cost:"));
  report.quote = await text("#extend-quote");
  await page.screenshot({ path: cfg.screenshots + "/extend.png" });
  const answer = page.waitForResponse((r) => r.url().includes("/api/gen/extend/"));
  await page.click("#extend-start");
  const r = await answer;
  report.extendStart = { status: r.status(), body: await r.text() };
  const ext = JSON.parse(report.extendStart.body).taskId;
  await page.waitForFunction(() => !document.querySelector("#extend-dialog").open);
  report.extensionCard = await text(card(ext) + " .hint");
  report.extensionStatus = await completed(ext);
  await page.waitForSelector(`#history-table tr[data-task-id="${ext}"]`);
  report.extensionHistory = true;
  // The credits view is asked again once the followed extension ended.
  await page.waitForFunction(() => document.querySelector("#credits-balance").textContent === "430 credits", null, { timeout: 10000 }).catch(() => {});
  report.balance = await text("#credits-balance");

  // Another client deletes the second task while its Extend dialog is
  // open: the start is refused, nothing is charged.
  await page.click(card(second) + " .extend-task");
  await page.waitForSelector("#extend-dialog[open]");
  await page.fill("#extend-prompt", "not after the delete");
  await page.waitForFunction(() => document.querySelector("#extend-quote").textContent.startsWith("Cost:"));
  report.refusedQuote = await text("#extend-quote");
  const del = await fetch(cfg.base + "/api/gen/tasks/" + second, { method: "DELETE", headers: { "X-API-Key": cfg.key } });
  if (!del.ok) throw new Error("the delete answered " + del.status);
  const refused = page.waitForResponse((r) => r.url().includes("/api/gen/extend/"));
  await page.click("#extend-start");
  report.refusedStatus = (await refused).status();
  await page.waitForFunction(() => document.querySelector("#extend-error").textContent !== "");
  report.refusedMessage = await text("#extend-error");
  // The history is shown again without the deleted task.
  report.staleRowGone = await page.waitForFunction((id) => !document.querySelector(`#history-table tr[data-task-id="${id}"]`),
    second, { timeout: 10000 }).then(() => true, () => false);
  await page.screenshot({ path: cfg.screenshots + "/extend-refused.png" });
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => !document.querySelector("#extend-dialog").open);
  const credits = page.waitForResponse((r) => r.url().includes("/api/gen/credits"));
  await page.click("#ledger-show");
  await credits;
  await page.waitForTimeout(100);
  report.balanceAfterRefusal = await text("#credits-balance");

  await browser.close();
  process.stdout.write(JSON.stringify(report));
}

main().catch((e) => { console.error(e); process.exit(1); });
