// The playground on a host that reports progress, driven by
// backend_test.go: starts a generation at the form's defaults and
// records the card's progress bar and elapsed line on every change until
// the card shows the completion. Settings as JSON on stdin; a JSON
// report on stdout.
"use strict";
const fs = require("fs");
const { chromium } = require("playwright-core");

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const browser = await chromium.launch({ executablePath: cfg.chromium, headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"] });
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);
  await page.goto(cfg.base + "/");
  await page.fill("#api-key", cfg.key);
  await page.click("#use-key");
  await page.waitForSelector("#models-table tbody tr");
  await page.fill("#prompt", "a slow paper boat");
  await page.click("#start");
  await page.waitForSelector("article.task progress");
  const report = { seen: [], finished: "" };
  const deadline = Date.now() + 90000;
  let last = "";
  while (Date.now() < deadline) {
    const seen = await page.$eval("article.task", (card) => ({
      bar: card.querySelector("progress") ? card.querySelector("progress").value : null,
      text: card.querySelector(".elapsed").textContent,
    }));
    if (seen.text.startsWith("Done in") || seen.bar === null) {
      report.finished = seen.text;
      break;
    }
    // The seconds count changes each second: record changes of the rest.
    const shape = seen.text.replace(/^\d+ s/, "") + "|" + seen.bar;
    if (seen.text && shape !== last) {
      last = shape;
      report.seen.push(seen);
    }
    await page.waitForTimeout(100);
  }
  await browser.close();
  process.stdout.write(JSON.stringify(report));
}

main().catch((e) => { console.error(e); process.exit(1); });
