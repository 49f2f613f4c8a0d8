// The playground's browser test, driven by browser_test.go: Debian's
// Chromium through playwright-core. It reads its settings as JSON on
// stdin, does what a person would, and writes a JSON report of what it
// saw on stdout, which the Go test checks. Progress goes to stderr.
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const log = (...a) => console.error("[browser]", ...a);

async function main() {
  const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
  const report = { requests: [], urls: [], cspViolations: [], consoleErrors: [], durations: [], played: [], downloads: [], historyPages: [], historyRows: [], taskStatuses: [] };
  fs.mkdirSync(cfg.userDataDir, { recursive: true });
  const context = await chromium.launchPersistentContext(cfg.userDataDir, {
    executablePath: cfg.chromium,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1100, height: 900 },
  });
  context.setDefaultTimeout(30000);
  context.on("request", (r) => report.requests.push(r.url()));
  const page = context.pages()[0] || (await context.newPage());
  page.on("framenavigated", (f) => report.urls.push(f.url()));
  page.on("console", (m) => {
    // The browser logs each 4xx answer; the 402 and 429 are wanted.
    if (m.type() === "error" && !/^Failed to load resource: the server responded with a status of 4(02|29)/.test(m.text())) report.consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => report.consoleErrors.push(String(e)));
  const shot = (name, opts = {}) => page.screenshot({ path: path.join(cfg.screenshots, name + ".png"), ...opts });

  // Any CSP violation of the page is reported to the test.
  await context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));
  });
  await page.goto(cfg.base + "/");

  // The key, with the keyboard alone: Tab to the field, type, Enter.
  report.keyboardFocus = [];
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press("Tab");
    report.keyboardFocus.push(await page.evaluate(() => {
      const a = document.activeElement;
      if (a.classList.contains("skip")) return "skip";
      if (a.getAttribute("href") === "docs") return "docs";
      return a.id;
    }));
  }
  await shot("key");
  await page.keyboard.type(cfg.mainKey);
  await page.keyboard.press("Enter");
  await page.waitForSelector("#app:not([hidden])");
  await page.waitForSelector("#models-table tbody tr");
  report.keyInStorage = await page.evaluate((k) => sessionStorage.getItem("gen.apiKey") === k, cfg.mainKey);
  report.cookies = await page.evaluate(() => document.cookie);
  log("key accepted");

  // The form: Lite is not offered for first-last-frame.
  await page.check("input[value=first-last-frame]");
  report.liteInFirstLast = await page.evaluate(() => [...document.querySelectorAll("#model option")].some((o) => o.value.includes("lite")));
  // An image that is not one is refused before anything is sent.
  await page.check("input[value=image-to-video]");
  const notImage = path.join(path.dirname(cfg.picture), "notes.png");
  fs.writeFileSync(notImage, "not an image at all");
  await page.setInputFiles("#file-image", notImage);
  await page.waitForFunction(() => document.querySelector("#err-image").textContent !== "");
  report.imageRefusal = await page.textContent("#err-image");

  // 1. Text to video, Lite, 4 seconds.
  await page.check("input[value=text-to-video]");
  await page.fill("#prompt", "a paper boat drifting on a pond at dawn");
  await page.selectOption("#model", "gen-3.1-lite-generate-001");
  await page.selectOption("#durationSeconds", String(cfg.duration));
  report.cost = await page.textContent("#cost");
  await shot("generate", { fullPage: true });
  await page.click("#start");
  await page.waitForSelector(".task");
  log("text-to-video started");

  // 2. Image to video, with a picked picture and its preview.
  await page.check("input[value=image-to-video]");
  await page.setInputFiles("#file-image", cfg.picture);
  await page.waitForSelector(".drop[data-field=image] .preview:not([hidden])");
  await page.fill("#prompt", "the gradient comes alive");
  await page.selectOption("#model", "gen-3.1-lite-generate-001");
  await page.selectOption("#durationSeconds", String(cfg.duration));
  await shot("image-to-video", { fullPage: true });
  await page.click("#start");
  await page.waitForFunction(() => document.querySelectorAll(".task").length === 2);
  await page.locator("#tasks-section").screenshot({ path: path.join(cfg.screenshots, "progress.png") });
  log("image-to-video started");

  // 3. First and last frame, the last one too large to go in the start
  // request: it goes through a direct upload first.
  await page.check("input[value=first-last-frame]");
  await page.setInputFiles("#file-firstFrame", cfg.picture);
  await page.setInputFiles("#file-lastFrame", cfg.largePicture);
  await page.waitForSelector(".drop[data-field=lastFrame] .preview:not([hidden])");
  await page.waitForSelector(".drop[data-field=firstFrame] .preview:not([hidden])");
  await page.fill("#prompt", "from a gradient to noise");
  await page.selectOption("#durationSeconds", String(cfg.duration));
  await page.selectOption("#resolution", "720p");
  await shot("first-last-frame", { fullPage: true });
  await page.click("#start");
  await page.waitForFunction(() => document.querySelectorAll(".task").length === 3 || document.querySelector("#gen-error").textContent !== "");
  const flfError = await page.textContent("#gen-error");
  if (flfError) throw new Error("first-last-frame refused: " + flfError);
  log("first-last-frame started");

  // 4. A generation that fails (the test's stack runs with fault
  // injection on): its card shows the contract's message and the refund.
  await page.check("input[value=text-to-video]");
  await page.fill("#prompt", "[fail] a storm at sea");
  await page.selectOption("#model", "gen-3.1-lite-generate-001");
  await page.click("#start");
  await page.waitForFunction(() => document.querySelectorAll(".task").length === 4);

  // 5. All end; the videos load, last the requested seconds, play.
  await page.waitForFunction(() => document.querySelectorAll(".task video").length === 3 &&
    document.querySelectorAll(".task .status-failed").length === 1, null, { timeout: 120000 });
  for (const v of await page.$$(".task video")) {
    const r = await v.evaluate(async (video) => {
      if (video.readyState < 1) await new Promise((ok, fail) => { video.onloadedmetadata = ok; video.onerror = () => fail(new Error("video error " + (video.error && video.error.message))); });
      video.muted = true;
      await video.play();
      await new Promise((ok) => { const t = () => (video.currentTime > 0 ? ok() : setTimeout(t, 50)); t(); });
      video.pause();
      return { duration: video.duration, played: video.currentTime };
    });
    report.durations.push(r.duration);
    report.played.push(r.played);
  }
  report.downloads = await page.$$eval(".task a[download]", (as) => as.map((a) => a.getAttribute("href")));
  report.taskStatuses = await page.$$eval(".task .task-status", (ps) => ps.map((p) => p.textContent));
  await page.evaluate(() => { for (const v of document.querySelectorAll(".task video")) v.currentTime = 1.5; });
  await page.waitForTimeout(300);
  await page.locator("#tasks-section").screenshot({ path: path.join(cfg.screenshots, "videos.png") });
  log("videos played", JSON.stringify(report.durations));

  // 6. History: two per page, two pages, then only the completed ones.
  await page.fill("#history-limit", "2");
  await page.click("#history-show");
  await page.waitForFunction(() => document.querySelector("#history-page").textContent.startsWith("Page 1 of 2"));
  report.historyPages.push(await page.textContent("#history-page"));
  report.historyRows.push(await page.locator("#history-table tbody tr").count());
  await page.click("#history-next");
  await page.waitForFunction(() => document.querySelector("#history-page").textContent.startsWith("Page 2 of 2"));
  report.historyPages.push(await page.textContent("#history-page"));
  report.historyRows.push(await page.locator("#history-table tbody tr").count());
  await page.fill("#history-limit", "20");
  await page.selectOption("#history-status", "completed");
  await page.click("#history-show");
  await page.waitForFunction(() => document.querySelector("#history-page").textContent.startsWith("Page 1 of 1"));
  report.completed = await page.textContent("#history-page");
  await page.locator("#history-section").screenshot({ path: path.join(cfg.screenshots, "history.png") });

  // 6b. Cancel: a generation held back by [slow:N] is cancelled from its
  // card with the keyboard; it ends failed/CANCELLED, refunded, and the
  // credits view shows the refund.
  await page.selectOption("#history-status", "");
  await page.click("#history-show");
  await page.waitForFunction(() => document.querySelector("#history-page").textContent.includes("(4 generations)"));
  await page.waitForFunction(() => /^\d+ credits$/.test(document.querySelector("#credits-balance").textContent));
  report.balanceBefore = await page.textContent("#credits-balance");
  await page.check("input[value=text-to-video]");
  await page.fill("#prompt", "[slow:300] a lighthouse in fog");
  await page.selectOption("#model", "gen-3.1-lite-generate-001");
  await page.selectOption("#durationSeconds", String(cfg.duration));
  await page.click("#start");
  await page.waitForFunction(() => document.querySelectorAll(".task").length === 5);
  const slow = page.locator(".task").first();
  await page.waitForFunction(() => document.querySelector("#credits-held").textContent.startsWith("65 credits (1 generation)"));
  report.heldDuringSlow = await page.textContent("#credits-held");
  report.balanceDuringSlow = await page.textContent("#credits-balance");
  await slow.locator(".cancel-task").focus();
  await page.keyboard.press("Enter");
  await slow.locator(".status-failed").waitFor();
  report.cancelStatus = await slow.locator(".task-status").textContent();
  report.cancelledActions = await slow.locator(".actions button").allTextContents();
  report.focusAfterCancel = await page.evaluate(() => { const a = document.activeElement; return a.textContent + " in " + (a.closest(".task") ? "its card" : a.tagName); });
  await page.waitForFunction(() => document.querySelector("#credits-held").textContent.startsWith("0 credits"));
  await page.waitForFunction((b) => document.querySelector("#credits-balance").textContent === b, report.balanceBefore);
  report.balanceAfterCancel = await page.textContent("#credits-balance");
  report.ledgerTop = await page.$eval("#ledger-table tbody tr", (tr) => [...tr.cells].slice(1).map((c) => c.textContent).join(" | "));
  report.cancelledTaskId = await slow.getAttribute("data-task-id");
  await page.locator("#credits-section").screenshot({ path: path.join(cfg.screenshots, "credits.png") });
  log("cancelled, refunded:", report.ledgerTop);

  // 6c. Delete: a second tab shows the history first; the first tab deletes
  // the failed task from its history row, with the keyboard (Escape
  // keeps it, then Tab to "Delete for good" and Enter); its row and card
  // go. The second tab's stale row then meets the contract's 404.
  const other = await context.newPage();
  await other.goto(cfg.base + "/");
  await other.fill("#api-key", cfg.mainKey);
  await other.click("#use-key");
  await other.waitForSelector("#history-table tbody tr.task-row");
  await page.waitForFunction(() => document.querySelector("#history-page").textContent.includes("(5 generations)"));
  const failedRow = page.locator("#history-table tbody tr.task-row", { hasText: "[fail] a storm at sea" });
  const failedId = await failedRow.getAttribute("data-task-id");
  await failedRow.locator(".delete-task").focus();
  await page.keyboard.press("Enter");
  await page.waitForSelector("#confirm-delete[open]");
  report.dialogFocus = [await page.evaluate(() => document.activeElement.id)];
  await page.keyboard.press("Escape");
  await page.waitForSelector("#confirm-delete", { state: "hidden" });
  report.keptOnEscape = (await failedRow.count()) === 1 && (await page.evaluate(() => document.activeElement.classList.contains("delete-task")));
  await page.keyboard.press("Enter");
  await page.waitForSelector("#confirm-delete[open]");
  await page.keyboard.press("Tab");
  report.dialogFocus.push(await page.evaluate(() => document.activeElement.id));
  await page.locator("#confirm-delete").screenshot({ path: path.join(cfg.screenshots, "delete-confirm.png") });
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelector("#history-page").textContent.includes("(4 generations)"));
  report.historyAfterDelete = await page.textContent("#history-page");
  report.deletedRowGone = (await page.locator(`#history-table tr[data-task-id="${failedId}"]`).count()) === 0;
  report.deletedCardGone = (await page.locator(`.task[data-task-id="${failedId}"]`).count()) === 0;
  report.deleteNote = await page.textContent("#history-note");
  const staleRow = other.locator(`#history-table tbody tr[data-task-id="${failedId}"]`);
  await staleRow.locator(".delete-task").click();
  await other.click("#confirm-yes");
  await other.waitForFunction(() => document.querySelector("#history-error").textContent !== "");
  report.message404 = await other.textContent("#history-error");
  await other.waitForFunction(() => document.querySelector("#history-page").textContent.includes("(4 generations)"));
  await other.close();
  log("deleted;", report.message404);

  // 6d. The ledger, two entries a page: older, then newer again.
  await page.fill("#ledger-limit", "2");
  await page.click("#ledger-show");
  const ledgerRows = () => page.$$eval("#ledger-table tbody tr", (trs) => trs.map((tr) => [...tr.cells].slice(1, 4).map((c) => c.textContent).join(" | ")));
  report.ledgerPages = [];
  report.ledgerRows = [];
  for (const [button, want] of [[null, "Page 1"], ["#ledger-next", "Page 2"], ["#ledger-prev", "Page 1"]]) {
    if (button) await page.click(button);
    await page.waitForFunction((w) => document.querySelector("#ledger-page").textContent.startsWith(w) && document.querySelectorAll("#ledger-table tbody tr").length === 2, want);
    report.ledgerPages.push(await page.textContent("#ledger-page"));
    report.ledgerRows.push((await ledgerRows()).join(" / "));
  }
  await page.fill("#ledger-limit", "20");
  await page.click("#ledger-show");
  log("ledger paged");

  // On a phone-sized screen nothing is wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => window.scrollTo(0, 0));
  report.phoneOverflows = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  if (report.phoneOverflows) {
    log("wider than the screen:", await page.evaluate(() => [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map((e) => e.tagName + "#" + e.id + "." + e.className).slice(0, 10).join(" ")));
  }
  await shot("phone");
  await page.setViewportSize({ width: 1100, height: 900 });
  log("history paged");

  // 7. 402: a key whose account has 10 credits.
  await page.click("#forget-key");
  await page.fill("#api-key", cfg.poorKey);
  await page.click("#use-key");
  await page.waitForSelector("#app:not([hidden])");
  await page.check("input[value=text-to-video]");
  await page.fill("#prompt", "a storm over the sea");
  await page.selectOption("#model", "gen-3.1-lite-generate-001");
  await page.click("#start");
  await page.waitForFunction(() => document.querySelector("#gen-error").textContent !== "");
  report.message402 = await page.textContent("#gen-error");
  report.tasksAfterSwitch = await page.locator(".task").count();
  await page.locator("#generate-section").screenshot({ path: path.join(cfg.screenshots, "credits-402.png") });
  log("402 shown");

  // 8. 429: a key that may make three requests a minute. Using it asks
  // for the models and the history; asking again meets the limit.
  await page.click("#forget-key");
  await page.fill("#api-key", cfg.tightKey);
  await page.click("#use-key");
  for (let i = 0; i < 6 && (await page.isHidden("#limit-banner")); i++) {
    await page.click("#history-show");
    await page.waitForTimeout(200);
  }
  await page.waitForSelector("#limit-banner:not([hidden])");
  report.message429 = (await page.textContent("#limit-title")) + " " + (await page.textContent("#limit-message"));
  report.countdown429 = Number(await page.textContent("#limit-countdown"));
  await shot("limit-429");
  log("429 shown");

  report.cspViolations = await page.evaluate(() => window.__csp);
  report.urls.push(page.url());
  await context.close();
  process.stdout.write(JSON.stringify(report));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
