// The docs page's browser test, driven by docs_browser_test.go: Debian's
// Chromium through playwright-core. The CDN is not reachable here, so
// requests to it are answered with the files of the npm package
// swagger-ui-dist at the page's pinned version: the browser still checks
// them against the page's SRI hashes and its Content-Security-Policy.
// It loads the page twice, with the CDN's files as published and with a
// changed bundle, and writes a JSON report on stdout.
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

async function visit(browser, cfg, tamper) {
  const context = await browser.newContext();
  const out = { cspViolations: [], consoleErrors: [], requests: [] };
  await context.route("https://cdn.jsdelivr.net/**", (route) => {
    const name = new URL(route.request().url()).pathname.split("/").pop();
    let body = fs.readFileSync(path.join(cfg.swaggerDist, name));
    if (tamper && name.endsWith(".js")) body = Buffer.concat([body, Buffer.from("\n// changed\n")]);
    route.fulfill({ status: 200, body, headers: { "content-type": name.endsWith(".css") ? "text/css" : "text/javascript", "access-control-allow-origin": "*" } });
  });
  context.on("request", (r) => out.requests.push(r.url()));
  await context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));
  });
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => out.consoleErrors.push(String(e)));
  await page.goto(cfg.base + "/docs");
  await page.waitForLoadState("load");
  if (!tamper) await page.waitForSelector(".swagger-ui .opblock", { timeout: 30000 });
  out.operations = await page.locator(".swagger-ui .opblock").count();
  out.listingHidden = await page.locator("#listing").evaluate((e) => e.hidden);
  out.listingWidth = await page.locator("#listing").evaluate((e) => getComputedStyle(e).maxWidth);
  out.cspViolations = await page.evaluate(() => window.__csp);
  await context.close();
  return out;
}

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const browser = await chromium.launch({ executablePath: cfg.chromium, headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  try {
    const published = await visit(browser, cfg, false);
    const changed = await visit(browser, cfg, true);
    process.stdout.write(JSON.stringify({ published, changed }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
