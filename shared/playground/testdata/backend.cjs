// The playground on a Veo backend, driven by backend_test.go: the form
// offers what the backend takes for the model, mode and duration (the
// models' limits), and a start left at the form's defaults is accepted.
// Settings as JSON on stdin; a JSON report on stdout.
"use strict";
const fs = require("fs");
const { chromium } = require("playwright-core");

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const browser = await chromium.launch({ executablePath: cfg.chromium, headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"] });
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);
  const values = (sel) => page.$$eval(sel + " option", (os) => os.map((o) => o.value));
  await page.goto(cfg.base + "/");
  await page.fill("#api-key", cfg.key);
  await page.click("#use-key");
  await page.waitForSelector("#models-table tbody tr");
  await page.selectOption("#model", "gen-3.1-fast-generate-001");
  const report = {};
  await page.selectOption("#durationSeconds", "8");
  report.resolutionsAt8 = await values("#resolution");
  await page.selectOption("#durationSeconds", "4");
  report.resolutionsAt4 = await values("#resolution");
  report.personText = await values("#personGeneration");
  report.sampleCounts = await values("#sampleCount");
  report.seedDisabled = await page.$eval("#seed", (s) => s.disabled);
  await page.check("input[name=mode][value=image-to-video]");
  report.personImage = await values("#personGeneration");
  await page.check("input[name=mode][value=text-to-video]");
  await page.fill("#prompt", "a paper boat, the form's defaults");
  const answer = page.waitForResponse((r) => r.url().endsWith("/api/gen/text-to-video"));
  await page.click("#start");
  const r = await answer;
  report.startStatus = r.status();
  report.startBody = await r.text();
  await browser.close();
  process.stdout.write(JSON.stringify(report));
}

main().catch((e) => { console.error(e); process.exit(1); });
