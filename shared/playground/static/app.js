// The playground's page: the key, the models and prices, the start form
// for the three modes (with reference images where the model takes
// them), the progress of running generations, the extension of a
// finished video, the history, cancel and delete, and the credits with
// their ledger. Every figure it checks comes from the service: prices from
// GET /api/gen/models, the parameters' bounds and each model's
// resolutions from /playground/limits.json (shared/params and
// shared/catalog, the service's own definitions), narrowed to what the
// backend in use takes by the models' limits (shared/capability).
import { apiKey, APIError, request, followEvents, newIdempotencyKey, sniffImage, uploadImage } from "./api.js";

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
};

const state = {
  limits: null,
  models: [],      // from GET /api/gen/models
  defaultModel: "",
  files: {},       // field -> File, checked
  refs: [],        // reference images: {file, type, url}, checked, in order
  history: { cursors: [""], page: 0, total: 0, seq: 0 },
  // The ledger's pages: cursors[n] asks for page n; seq orders answers.
  credits: { cursors: [""], page: 0, seq: 0 },
  tasks: new Map(), // taskId -> card
  // epoch changes with the key: a poll of the previous key's task stops.
  epoch: 0,
};

const modeFields = {
  "text-to-video": [],
  "image-to-video": ["image"],
  "first-last-frame": ["firstFrame", "lastFrame"],
};

// Reference images (text to video): the field that carries them, the
// mode of the models' limits that says who takes them, and how many a
// start may bring (the contract's one to three).
const refsField = "referenceImages";
const refsMode = "reference-images";
const maxRefs = 3;

// ---------------------------------------------------------------- limits

let limitTimer = null;

// showLimit shows a 429's message and counts down to its Retry-After.
function showLimit(err) {
  const banner = $("#limit-banner");
  const titles = {
    RATE_LIMIT_EXCEEDED: "Rate limit reached.",
    DAILY_LIMIT_EXCEEDED: "Daily limit reached.",
    CONCURRENCY_LIMIT_EXCEEDED: "Too many generations in progress.",
  };
  $("#limit-title").textContent = titles[err.code] || "Limit reached.";
  $("#limit-message").textContent = err.message;
  let left = Math.max(0, Math.ceil(err.retryAfter ?? 1));
  const end = Date.now() + left * 1000;
  $("#limit-countdown").textContent = String(left);
  banner.hidden = false;
  clearInterval(limitTimer);
  limitTimer = setInterval(() => {
    left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    $("#limit-countdown").textContent = String(left);
    if (left === 0) {
      clearInterval(limitTimer);
      banner.hidden = true;
    }
  }, 1000);
}

// describe turns an APIError into the sentence to show, and shows the
// countdown of a 429.
function describe(err) {
  if (!(err instanceof APIError)) return "Something went wrong in the page: " + err.message;
  switch (err.status) {
    case 429:
      showLimit(err);
      return `${err.message} (retry in ${err.retryAfter ?? 1} s)`;
    case 402:
      return `Not enough credits: ${err.message}` +
        (err.required !== undefined ? ` This generation costs ${err.required} credits; the account has ${err.available}.` : "");
    case 401:
      return `${err.message}. Check the API key.`;
    default:
      return err.field ? `${err.message} (field ${err.field})` : err.message;
  }
}

// ---------------------------------------------------------------- key

// clearAccount removes what the page shows of the previous key's account
// and stops following its tasks.
function clearAccount() {
  state.epoch++;
  ext.button = null;
  if ($("#extend-dialog").open) $("#extend-dialog").close();
  state.tasks.clear();
  $("#tasks").replaceChildren();
  $("#tasks-empty").hidden = false;
  $("#history-table tbody").replaceChildren();
  $("#history-page").textContent = "";
  state.history = { cursors: [""], page: 0, total: 0, seq: state.history.seq + 1 };
  $("#history-error").textContent = "";
  $("#history-note").textContent = "";
  state.credits = { cursors: [""], page: 0, seq: state.credits.seq + 1 };
  for (const id of ["#credits-balance", "#credits-held", "#credits-tier"]) $(id).textContent = "-";
  $("#limits-table tbody").replaceChildren();
  $("#ledger-table tbody").replaceChildren();
  $("#ledger-page").textContent = "";
  $("#credits-error").textContent = "";
  $("#gen-error").textContent = "";
}

async function useKey(key) {
  clearAccount();
  apiKey.set(key);
  $("#key-status").textContent = "Checking the key...";
  try {
    const { data } = await request("GET", "api/gen/models");
    state.models = data.models;
    state.defaultModel = data.defaultModel || state.limits.defaultModel;
  } catch (err) {
    if (err.status === 401) apiKey.clear();
    $("#key-status").textContent = describe(err);
    $("#key-status").className = "error";
    return;
  }
  $("#api-key").value = "";
  $("#key-status").className = "ok";
  $("#key-status").textContent = `Using the key ending in ...${key.slice(-4)}.`;
  $("#forget-key").hidden = false;
  $("#app").hidden = false;
  renderModels();
  fillForm();
  loadHistory(0);
  showCredits();
}

function forgetKey() {
  apiKey.clear();
  clearAccount();
  $("#app").hidden = true;
  $("#forget-key").hidden = true;
  $("#key-status").className = "";
  $("#key-status").textContent = "The key is forgotten.";
  $("#api-key").focus();
}

// ---------------------------------------------------------------- models

function modelName(id) {
  const m = state.models.find((m) => m.modelId === id);
  return m ? m.name : id;
}

function renderModels() {
  const body = $("#models-table tbody");
  body.replaceChildren();
  for (const m of state.models) {
    const modes = m.capabilities.filter((c) => c in modeFields).join(", ");
    body.append(el("tr", {},
      el("td", {}, el("strong", {}, m.name), el("br"), el("code", {}, m.modelId), el("br"), el("span", { class: "hint" }, m.description),
        ...(m.available === false ? [el("br"), el("span", { class: "hint" }, "Unavailable: its providers do not serve it right now.")] : [])),
      el("td", {}, modes + (m.capabilities.includes("audio-generation") ? "; audio" : "")),
      el("td", {}, String(m.pricing.creditsPerVideo)),
      el("td", {}, String(m.pricing.creditsPerVideoNoAudio))));
  }
}

// ---------------------------------------------------------------- form

function mode() { return $("input[name=mode]:checked").value; }

function options(select, values, labels, selected) {
  select.replaceChildren(...values.map((v, i) => el("option", { value: String(v), selected: String(v) === String(selected) }, labels ? labels[i] : String(v))));
}

function fillForm() {
  const L = state.limits;
  options($("#sampleCount"), Array.from({ length: L.maxSampleCount }, (_, i) => i + 1), null, 1);
  options($("#durationSeconds"), L.durations, null, L.defaultDuration);
  options($("#aspectRatio"), L.aspectRatios, L.aspectRatios.map((a) => a === "16:9" ? "16:9 (landscape)" : a === "9:16" ? "9:16 (portrait)" : a), L.aspectRatios[0]);
  options($("#personGeneration"), L.personGeneration,
    L.personGeneration.map((p) => p === "allow_adult" ? "Allow adults" : p === "dont_allow" ? "Don't allow people" : p), L.personGeneration[0]);
  $("#prompt").maxLength = L.maxPromptChars;
  $("#negativePrompt").maxLength = L.maxNegativePromptChars;
  $("#seed").max = String(L.maxSeed);
  $("#seed-help").textContent = `0 to ${L.maxSeed}; empty picks one at random.`;
  for (const f of ["image", "firstFrame", "lastFrame"]) {
    $(`#hint-${f}`).textContent = `Pick a file, or drop one here. At most ${L.maxImageBytes / 1048576} MiB and ${L.maxImageSide} x ${L.maxImageSide} pixels.`;
  }
  $(`#hint-${refsField}`).textContent = `Pick files, or drop them here: up to ${maxRefs}, each at most ${L.maxImageBytes / 1048576} MiB and ${L.maxImageSide} x ${L.maxImageSide} pixels.`;
  fillModels();
  update();
}

// fillModels offers the models that support the mode and that sell now
// (available is false while no provider serves one: its starts are
// refused MODEL_UNAVAILABLE), keeping the choice when it still applies.
function fillModels() {
  const sel = $("#model");
  const keep = sel.value || state.defaultModel;
  const usable = state.models.filter((m) => m.capabilities.includes(mode()) && m.available !== false);
  const chosen = usable.some((m) => m.modelId === keep) ? keep :
    (usable.some((m) => m.modelId === state.defaultModel) ? state.defaultModel : usable[0]?.modelId);
  options(sel, usable.map((m) => m.modelId), usable.map((m) => m.name), chosen);
  fillResolutions();
}

// fillResolutions offers what the model takes on the service's backend:
// its limits from GET /api/gen/models (durations, aspect ratios and
// resolutions at the duration, narrowed for the mode where the limits
// say so; personGeneration for the mode, samples, seed) when the service
// gives them, else the contract's from limits.json. The mode is
// reference-images once reference images are chosen. A choice kept only
// while it still applies; the first value is the backend's default.
function fillResolutions() {
  const L = state.limits;
  const lim = L.models.find((m) => m.modelId === $("#model").value);
  const backend = chosenModel()?.limits;
  const em = limitsMode();
  const durations = backend?.durationsByMode?.[em] || backend?.durations || L.durations;
  keepOption($("#durationSeconds"), durations, null, L.defaultDuration);
  const aspects = backend?.aspectRatiosByMode?.[em] || backend?.aspectRatios || L.aspectRatios;
  keepOption($("#aspectRatio"), aspects, aspects.map((a) => a === "16:9" ? "16:9 (landscape)" : a === "9:16" ? "9:16 (portrait)" : a));
  let res = lim ? lim.resolutions : ["720p"];
  if (backend) res = backend.resolutions[$("#durationSeconds").value] || res;
  const byMode = backend?.resolutionsByMode?.[em];
  if (byMode) res = res.filter((r) => byMode.includes(r));
  // A resolution priced apart (4k) says so: its price is in the cost.
  const priced = chosenModel()?.pricing.byResolution || {};
  keepOption($("#resolution"), res, res.map((r, i) => (i === 0 ? `${r} (default)` : r) + (priced[r] ? ` (${priced[r].creditsPerVideo} credits a video)` : "")));
  const persons = backend?.personGeneration[em] || state.limits.personGeneration;
  keepOption($("#personGeneration"), persons,
    persons.map((p) => p === "allow_adult" ? "Allow adults" : p === "dont_allow" ? "Don't allow people" : p === "allow_all" ? "Allow all ages" : p));
  const max = backend ? backend.maxSampleCount : state.limits.maxSampleCount;
  keepOption($("#sampleCount"), Array.from({ length: max }, (_, i) => i + 1), null);
  const seed = $("#seed");
  seed.disabled = backend ? !backend.seed : false;
  if (seed.disabled) seed.value = "";
}

// keepOption offers values, keeping the choice when it is among them,
// else fallback when it is, else the first.
function keepOption(select, values, labels, fallback) {
  const keep = select.value;
  const all = values.map(String);
  options(select, values, labels, all.includes(keep) ? keep : all.includes(String(fallback)) ? fallback : values[0]);
}

function chosenModel() { return state.models.find((m) => m.modelId === $("#model").value); }

// refsOffered: the chosen model takes reference images on this backend
// (its capabilities, and its limits' modes where the service gives
// them), and the mode is text to video.
function refsOffered() {
  const m = chosenModel();
  return mode() === "text-to-video" && !!m && m.capabilities.includes(refsMode) &&
    (!m.limits || m.limits.modes.includes(refsMode));
}

// refsSent are the reference images a start sends: none unless offered.
function refsSent() { return refsOffered() ? state.refs : []; }

// limitsMode is the mode whose limits apply: reference-images for a
// text-to-video start with reference images.
function limitsMode() { return refsSent().length > 0 ? refsMode : mode(); }

// cost is the price the service will charge: price(model, resolution,
// audio) x videos (params.Request.Cost), from the models endpoint's
// prices: a resolution priced apart (pricing.byResolution, 4k) at its
// own. Reference images cost nothing more.
function cost() {
  const m = chosenModel();
  if (!m) return null;
  const audio = $("#generateAudio").checked;
  const res = $("#resolution").value;
  const apart = (m.pricing.byResolution || {})[res];
  const price = apart || m.pricing;
  const per = audio ? price.creditsPerVideo : price.creditsPerVideoNoAudio;
  const n = Number($("#sampleCount").value);
  return { total: per * n, per, n, audio, name: m.name + (apart ? ` at ${res}` : ""), refs: refsSent().length };
}

function update() {
  const m = mode();
  for (const d of document.querySelectorAll(".drop")) {
    d.hidden = d.dataset.field === refsField ? !refsOffered() : !modeFields[m].includes(d.dataset.field);
  }
  const c = cost();
  const refs = c?.refs ? `, with ${c.refs} reference image${c.refs > 1 ? "s" : ""}` : "";
  $("#cost").textContent = c ? `Cost: ${c.total} credits (${c.name}, ${c.audio ? "with" : "without"} audio: ${c.per} x ${c.n} video${c.n > 1 ? "s" : ""}${refs}).` : "";
  const count = (id, max, out) => {
    const n = [...$(id).value.trim()].length;
    $(out).textContent = `${n} of ${max} characters.`;
  };
  count("#prompt", state.limits.maxPromptChars, "#prompt-count");
  count("#negativePrompt", state.limits.maxNegativePromptChars, "#negative-count");
}

// checkImage checks an image as the service would (type by its bytes,
// size, and width and height), decoding it into img (a blob: URL, which
// the caller revokes): it answers the type, or throws the sentence that
// says why the service would refuse it.
async function checkImage(file, img) {
  const L = state.limits;
  const type = await sniffImage(file);
  if (!type) throw new Error(`"${file.name}" is not a JPEG or PNG image.`);
  if (file.size > L.maxImageBytes) {
    throw new Error(`"${file.name}" is ${(file.size / 1048576).toFixed(1)} MiB; the limit is ${L.maxImageBytes / 1048576} MiB.`);
  }
  img.src = URL.createObjectURL(file);
  try {
    await img.decode();
  } catch {
    throw new Error(`"${file.name}" could not be read as an image.`);
  }
  if (img.naturalWidth > L.maxImageSide || img.naturalHeight > L.maxImageSide) {
    throw new Error(`"${file.name}" is ${img.naturalWidth} x ${img.naturalHeight} pixels; each side may be at most ${L.maxImageSide}.`);
  }
  return type;
}

// pickFile checks an image (checkImage) and shows its preview; a file
// that would be refused is not kept.
async function pickFile(field, file) {
  const box = $(`.drop[data-field=${field}]`);
  const err = $(`#err-${field}`);
  const img = $(".preview", box);
  err.textContent = "";
  delete state.files[field];
  if (img.src) URL.revokeObjectURL(img.src);
  img.removeAttribute("src");
  img.hidden = true;
  if (!file) return;
  try {
    state.files[field] = { file, type: await checkImage(file, img) };
    img.hidden = false;
  } catch (e) {
    err.textContent = e.message;
  }
}

// addRefs adds reference images, each checked as pickFile checks one,
// up to maxRefs; each shows with its preview and a Remove button. The
// form's limits follow (the mode is now reference-images).
async function addRefs(files) {
  const err = $(`#err-${refsField}`);
  err.textContent = "";
  const problems = [];
  for (const file of files) {
    if (state.refs.length >= maxRefs) {
      problems.push(`At most ${maxRefs} reference images: "${file.name}" was not added.`);
      continue;
    }
    const img = el("img", { alt: `Reference image ${file.name}` });
    try {
      const type = await checkImage(file, img);
      state.refs.push({ file, type, url: img.src });
    } catch (e) {
      if (img.src) URL.revokeObjectURL(img.src);
      problems.push(e.message);
    }
  }
  err.textContent = problems.join(" ");
  $(`#file-${refsField}`).value = "";
  showRefs();
}

function removeRef(i) {
  const [r] = state.refs.splice(i, 1);
  if (r) URL.revokeObjectURL(r.url);
  showRefs();
  $(`#file-${refsField}`).focus();
}

function showRefs() {
  $(".ref-list").replaceChildren(...state.refs.map((r, i) => {
    const b = el("button", { type: "button", class: "secondary", "aria-label": `Remove reference image ${i + 1}, ${r.file.name}` }, "Remove");
    b.addEventListener("click", () => removeRef(i));
    return el("li", {}, el("img", { src: r.url, alt: `Reference image ${i + 1}: ${r.file.name}` }), b);
  }));
  fillResolutions();
  update();
}

function wireRefs(box) {
  const input = $("input[type=file]", box);
  input.addEventListener("change", () => addRefs([...input.files]));
  box.addEventListener("dragover", (e) => { e.preventDefault(); box.classList.add("over"); });
  box.addEventListener("dragleave", () => box.classList.remove("over"));
  box.addEventListener("drop", (e) => {
    e.preventDefault();
    box.classList.remove("over");
    addRefs([...e.dataTransfer.files]);
  });
}

function wireDrop(box) {
  const field = box.dataset.field;
  const input = $("input[type=file]", box);
  input.addEventListener("change", () => pickFile(field, input.files[0]));
  box.addEventListener("dragover", (e) => { e.preventDefault(); box.classList.add("over"); });
  box.addEventListener("dragleave", () => box.classList.remove("over"));
  box.addEventListener("drop", (e) => {
    e.preventDefault();
    box.classList.remove("over");
    const file = e.dataTransfer.files[0];
    if (file) {
      const dt = new DataTransfer();
      dt.items.add(file);
      input.files = dt.files;
      pickFile(field, file);
    }
  });
}

// parameters are the form's generation parameters; text values stay
// strings for multipart and become numbers and booleans for JSON.
function parameters() {
  const p = {
    prompt: $("#prompt").value,
    model: $("#model").value,
    sampleCount: Number($("#sampleCount").value),
    durationSeconds: Number($("#durationSeconds").value),
    aspectRatio: $("#aspectRatio").value,
    resolution: $("#resolution").value,
    generateAudio: $("#generateAudio").checked,
    enhancePrompt: $("#enhancePrompt").checked,
    personGeneration: $("#personGeneration").value,
  };
  const neg = $("#negativePrompt").value;
  if (neg.trim() !== "") p.negativePrompt = neg;
  const seed = $("#seed").value.trim();
  if (seed !== "") p.seed = Number(seed);
  return p;
}

// check finds what the service would refuse before anything is sent.
function check(p) {
  const L = state.limits;
  const n = [...p.prompt.trim()].length;
  if (n === 0) return ["prompt", "Write a prompt."];
  if (n > L.maxPromptChars) return ["prompt", `The prompt is ${n} characters; at most ${L.maxPromptChars}.`];
  if (p.seed !== undefined && !(Number.isInteger(p.seed) && p.seed >= 0 && p.seed <= L.maxSeed)) {
    return ["seed", `The seed must be a whole number from 0 to ${L.maxSeed}.`];
  }
  for (const f of modeFields[mode()]) {
    if (!state.files[f]) return [`file-${f}`, `Choose the ${f === "image" ? "image" : f === "firstFrame" ? "first frame" : "last frame"}: a JPEG or PNG.`];
  }
  return null;
}

async function start(e) {
  e.preventDefault();
  const out = $("#gen-error");
  out.textContent = "";
  const p = parameters();
  const bad = check(p);
  if (bad) {
    out.textContent = bad[1];
    $("#" + bad[0]).focus();
    return;
  }
  const button = $("#start");
  button.disabled = true;
  const m = mode();
  try {
    const headers = { "Idempotency-Key": newIdempotencyKey() };
    let opts;
    const refs = m === "text-to-video" ? refsSent() : [];
    if (m === "text-to-video" && refs.length === 0) {
      opts = { json: p, headers };
    } else if (refs.length > 0) {
      // Reference images go as the frames do: files of a form, each
      // with its share of what a request may carry; when one is larger,
      // all go through direct uploads, named in a JSON body (a form
      // carries files only, a JSON body upload ids only).
      if (refs.some((r) => r.file.size > state.limits.directUploadAbove / refs.length)) {
        const ids = [];
        for (const r of refs) ids.push(await uploadImage(r.file, r.type));
        opts = { json: { ...p, referenceImages: ids }, headers };
      } else {
        const form = new FormData();
        for (const [k, v] of Object.entries(p)) form.append(k, String(v));
        for (const r of refs) form.append(refsField, r.file, r.file.name);
        opts = { form, headers };
      }
    } else {
      const form = new FormData();
      for (const [k, v] of Object.entries(p)) form.append(k, String(v));
      // first-last-frame carries both frames in one request: each gets
      // half of what a request may carry, as in the Go client.
      const limit = state.limits.directUploadAbove / modeFields[m].length;
      for (const f of modeFields[m]) {
        const { file, type } = state.files[f];
        if (file.size > limit) form.append(f + "UploadId", await uploadImage(file, type));
        else form.append(f, file, file.name);
      }
      opts = { form, headers };
    }
    const { data } = await request("POST", "api/gen/" + m, opts);
    addTask(data.taskId, { prompt: p.prompt, type: m, estimate: data.estimatedWaitTime, started: data });
    loadHistory(state.history.page);
    showCredits();
  } catch (err) {
    out.textContent = describe(err);
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- tasks

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The status polls of every task the page follows share one pace: at
// most half the key's requests per minute (X-RateLimit-Limit of the last
// poll), so that following several generations never uses up the limit
// the person's own clicks need. One task polled as Retry-After asks is
// well within it; three on a Standard key (60 a minute) are spaced 2 s
// apart between them instead of each every 2 s.
const pollPace = { next: 0, perMinute: 60 };

async function pollSlot() {
  const spacing = 120000 / Math.max(1, pollPace.perMinute);
  const now = Date.now();
  const at = Math.max(now, pollPace.next);
  pollPace.next = at + spacing;
  if (at > now) await sleep(at - now);
}

// addTask shows a card for the task and follows it to its end.
function addTask(taskId, info = {}) {
  $("#tasks-empty").hidden = true;
  let card = state.tasks.get(taskId);
  if (card) {
    card.scrollIntoView({ block: "nearest" });
    $("h3", card).focus();
    return;
  }
  card = el("article", { class: "task", "data-task-id": taskId, "aria-labelledby": "h-" + taskId },
    el("h3", { id: "h-" + taskId, tabIndex: -1 }, info.prompt || taskId),
    el("p", { class: "hint" }, `${info.type || ""} · `, el("code", {}, taskId)),
    el("p", { class: "task-status", role: "status" }, info.started
      ? `Started: ${info.started.creditsUsed ?? info.started.creditsCost} credits charged, ${info.started.remainingCredits} left. Waiting for the generation...`
      : "Reading the status..."),
    el("progress", { max: 100, "aria-label": "Progress of " + taskId }),
    el("p", { class: "elapsed hint" }),
    el("div", { class: "videos" }),
    el("p", { class: "error task-error" }));
  taskActions(card, taskId, "pending");
  $("#tasks").prepend(card);
  state.tasks.set(taskId, card);
  follow(taskId, card, info);
}

// follow shows the task live from its event stream (followEvents), and
// falls back to polling its status when the stream cannot be had.
async function follow(taskId, card, info) {
  const epoch = state.epoch;
  const show = taskView(taskId, card, info);
  const gone = () => epoch !== state.epoch || state.tasks.get(taskId) !== card || card.dataset.ended;
  const streamed = await followEvents("api/gen/status/" + encodeURIComponent(taskId) + "/events",
    (task) => gone() || show(task));
  if (!streamed && !gone()) await poll(taskId, card, show);
}

// taskView is what shows a task's status on its card: it returns a
// function that shows one status body and answers true once the task
// has ended (and the card shows its end).
function taskView(taskId, card, info) {
  const status = $(".task-status", card);
  const elapsed = $(".elapsed", card);
  const bar = $("progress", card);
  const maxWait = parseInt(String(info.estimate || "").split("-")[1] || "", 10);
  let last = "";
  let running = false;
  return (task) => {
    $(".task-error", card).textContent = "";
    if (task.status !== last) {
      last = task.status;
      taskActions(card, taskId, task.status);
      if (task.status === "pending") status.textContent = "Pending: queued for generation.";
      if (task.status === "processing") status.textContent = "Processing: the video is being generated.";
    }
    const secs = Math.max(0, Math.round((Date.now() - Date.parse(task.createdAt)) / 1000));
    if (task.status === "completed" || task.status === "failed") {
      if (task.status === "completed") finished(card, task);
      else failed(card, task);
      // It ended while followed: the balance, the ledger and the
      // history's status changed.
      if (running) {
        showCredits();
        loadHistory(state.history.page);
      }
      return true;
    }
    running = true;
    // The provider's own progress (an extension field, while processing)
    // beats an estimate from the elapsed time.
    const progress = task.status === "processing" && Number.isInteger(task.progress) ? task.progress : null;
    elapsed.textContent = `${secs} s since it started` +
      (progress !== null ? `; ${progress}% done.` : maxWait ? `; expected within ${maxWait} s.` : ".");
    if (progress !== null) bar.value = progress;
    else if (maxWait) bar.value = Math.min(95, (100 * secs) / maxWait);
    return false;
  };
}

// poll polls the task's status, waiting what Retry-After asks between
// polls (and a 429's Retry-After), until it is completed or failed.
async function poll(taskId, card, show) {
  const status = $(".task-status", card);
  const bar = $("progress", card);
  const epoch = state.epoch;
  for (;;) {
    if (epoch !== state.epoch || state.tasks.get(taskId) !== card) return;
    let task, wait = 2;
    await pollSlot();
    if (epoch !== state.epoch || state.tasks.get(taskId) !== card) return;
    try {
      const r = await request("GET", "api/gen/status/" + encodeURIComponent(taskId));
      task = r.data;
      if (r.retryAfter !== null) wait = r.retryAfter;
      const limit = parseInt(r.headers.get("X-RateLimit-Limit") || "", 10);
      if (limit > 0) pollPace.perMinute = limit;
    } catch (err) {
      if (err.status === 429 || err.status === 0 || err.status >= 500) {
        $(".task-error", card).textContent = describe(err);
        await sleep(1000 * Math.max(1, err.retryAfter ?? 2));
        continue;
      }
      if (epoch !== state.epoch) return;
      status.textContent = describe(err);
      bar.remove();
      return;
    }
    if (epoch !== state.epoch || state.tasks.get(taskId) !== card) return;
    // A cancel from the page has shown the end already.
    if (card.dataset.ended) return;
    if (show(task)) return;
    await sleep(1000 * Math.max(1, wait));
  }
}

async function finished(card, task) {
  card.dataset.ended = "1";
  taskActions(card, task.taskId, task.status);
  if (canExtend(task)) {
    const b = el("button", { type: "button", class: "secondary extend-task", "aria-label": "Extend " + $("h3", card).textContent }, "Extend");
    b.addEventListener("click", () => openExtend(task, b));
    $(".actions", card).append(b);
  }
  $("progress", card)?.remove();
  $(".elapsed", card).textContent = `Done in ${task.processingTime} s.`;
  const status = $(".task-status", card);
  status.className = "task-status status-completed";
  const refund = task.creditsRefunded ? ` ${task.creditsRefunded} credits were refunded for the videos that could not be made.` : "";
  status.textContent = `Completed: ${task.videos.length} video${task.videos.length > 1 ? "s" : ""}.${refund}`;
  let videos = task.videos;
  try {
    // The download endpoint gives fresh links, as a client does.
    videos = (await request("GET", "api/gen/download/" + encodeURIComponent(task.taskId))).data.videos;
  } catch (err) {
    $(".task-error", card).textContent = describe(err);
  }
  const box = $(".videos", card);
  box.replaceChildren(...videos.map((v, i) => el("figure", {},
    // The poster frame (an extension) shows the video before it loads.
    el("video", { controls: true, preload: "metadata", src: v.url, ...(v.posterUrl ? { poster: v.posterUrl } : {}), playsInline: true, "aria-label": `Video ${i + 1} of ${task.prompt}` }),
    el("figcaption", {}, el("a", { href: v.url, download: `${task.taskId}-${i + 1}.mp4` }, `Download video ${i + 1}`),
      ` (link valid until ${new Date(v.expiresAt).toLocaleString()})`))));
}

function failed(card, task) {
  card.dataset.ended = "1";
  taskActions(card, task.taskId, task.status);
  $("progress", card)?.remove();
  $(".elapsed", card).textContent = "";
  const status = $(".task-status", card);
  status.className = "task-status status-failed";
  const e = task.error || {};
  status.textContent = `Failed${e.code ? " (" + e.code + ")" : ""}: ${e.message || "the generation failed."} ` +
    `Refunded: ${task.creditsRefunded ?? task.creditsCost} credits.`;
}

// ---------------------------------------------------------------- extend

const extendMode = "video-extension";

// canExtend: the task's model extends videos on this backend (its
// capabilities, and its limits' modes where the service gives them),
// and the task's video is one the limits say it extends (its resolution
// among extendResolutions, its length within maxExtendSeconds, its
// completion within extendWithinSeconds of now). Only the
// route that made a video extends it (a Veo route): the service refuses
// any other with 400 naming taskId, which the dialog shows.
function canExtend(task) {
  const m = state.models.find((m) => m.modelId === task.model);
  if (!m || !m.capabilities.includes(extendMode) || !(task.videos || []).length || m.available === false) return false;
  const l = m.limits;
  if (!l) return true;
  return l.modes.includes(extendMode) &&
    (!l.extendResolutions || l.extendResolutions.includes(task.parameters.resolution)) &&
    (!l.maxExtendSeconds || task.parameters.durationSeconds <= l.maxExtendSeconds) &&
    (!l.extendWithinSeconds || !task.completedAt || Date.now() - Date.parse(task.completedAt) <= l.extendWithinSeconds * 1000);
}

// ext is the extension being asked: its source task, the button that
// opened the dialog, and the quote's pending timer and order.
const ext = { taskId: "", button: null, timer: 0, seq: 0 };

// openExtend asks for an extension's prompt in a modal dialog; the quote
// follows the prompt.
function openExtend(task, button) {
  ext.taskId = task.taskId;
  ext.button = button;
  ext.seq++;
  $("#extend-text").textContent = `The video of "${task.prompt}" continues in a new generation with its model ` +
    `(${modelName(task.model)}) and aspect ratio, charged like any start. The video it makes is the whole: this one and what follows.`;
  $("#extend-prompt").value = "";
  $("#extend-prompt").maxLength = state.limits.maxPromptChars;
  $("#extend-quote").textContent = "Write the prompt to see the price.";
  $("#extend-error").textContent = "";
  $("#extend-start").disabled = false;
  $("#extend-dialog").showModal();
  $("#extend-prompt").focus();
}

// quoteExtend asks POST api/gen/quote/extend once the prompt has rested
// half a second (each quote counts against the key's request limits):
// the credits the extension would charge and the balance it would leave,
// or the contract's refusal.
function quoteExtend() {
  clearTimeout(ext.timer);
  const seq = ++ext.seq;
  const prompt = $("#extend-prompt").value;
  if (prompt.trim() === "") {
    $("#extend-quote").textContent = "Write the prompt to see the price.";
    return;
  }
  ext.timer = setTimeout(async () => {
    let q;
    try {
      q = (await request("POST", "api/gen/quote/extend?" + new URLSearchParams({ taskId: ext.taskId }), { json: { prompt } })).data;
    } catch (err) {
      if (seq !== ext.seq) return;
      $("#extend-quote").textContent = "";
      $("#extend-error").textContent = failure(err);
      return;
    }
    if (seq !== ext.seq) return; // a newer prompt, or another dialog, asks
    $("#extend-error").textContent = "";
    $("#extend-quote").textContent = `Cost: ${q.creditsRequired} credits; the balance would go from ${q.balance} to ${q.balanceAfter}.` +
      (q.allowed ? "" : ` It would be refused now: ${q.refusal.message}`);
  }, 500);
}

// startExtend starts the extension (POST api/gen/extend/{taskId}, with a
// fresh Idempotency-Key as every start): the new task gets its own card,
// followed as any start's, and its own history entry. A refusal stays in
// the dialog with the contract's message.
async function startExtend(e) {
  e.preventDefault();
  const prompt = $("#extend-prompt").value;
  if (prompt.trim() === "") {
    $("#extend-error").textContent = "Write a prompt.";
    $("#extend-prompt").focus();
    return;
  }
  clearTimeout(ext.timer);
  ext.seq++;
  const button = $("#extend-start");
  button.disabled = true;
  $("#extend-error").textContent = "";
  let data;
  try {
    data = (await request("POST", "api/gen/extend/" + encodeURIComponent(ext.taskId),
      { json: { prompt }, headers: { "Idempotency-Key": newIdempotencyKey() } })).data;
  } catch (err) {
    $("#extend-error").textContent = failure(err);
    button.disabled = false;
    $("#extend-prompt").focus();
    // The page showed the task as it no longer is (another tab or
    // client deleted it): the history is shown again.
    if (err.status === 404 || err.field === "taskId") refreshStale();
    return;
  }
  ext.button = null;
  $("#extend-dialog").close();
  addTask(data.taskId, { prompt, type: extendMode, estimate: data.estimatedWaitTime, started: data });
  $("h3", state.tasks.get(data.taskId)).focus();
  loadHistory(state.history.page);
  showCredits();
}

// extendClosed: a dialog closed without a start gives the focus back to
// the Extend button that opened it.
function extendClosed() {
  clearTimeout(ext.timer);
  ext.seq++;
  if (ext.button && ext.button.isConnected) ext.button.focus();
}

// ---------------------------------------------------------------- cancel and delete

// taskActions gives a task card the action its status allows: Cancel
// while it is pending or processing (POST api/gen/cancel/{taskId}),
// Delete once it is finished (DELETE api/gen/tasks/{taskId}). follow(),
// finished() and failed() call it on each change of status.
function taskActions(card, taskId, status) {
  let box = $(".actions", card);
  if (!box) {
    box = el("div", { class: "row actions" });
    $(".task-error", card).before(box);
  }
  const label = $("h3", card).textContent;
  box.replaceChildren(actionButton(taskId, status, label, $(".task-error", card)));
}

// actionButton is the Cancel or Delete button of a task in status, for a
// card or a history row; errors go to out.
function actionButton(taskId, status, label, out) {
  if (status === "pending" || status === "processing") {
    const b = el("button", { type: "button", class: "secondary cancel-task", "aria-label": "Cancel " + label }, "Cancel");
    b.addEventListener("click", () => cancelTask(taskId, b, out));
    return b;
  }
  const b = el("button", { type: "button", class: "secondary delete-task", "aria-label": "Delete " + label }, "Delete");
  b.addEventListener("click", () => deleteTask(taskId, label, b, out));
  return b;
}

// cancelTask cancels the task: the answer is its status body, failed with
// error code CANCELLED and the credits refunded, shown on its card (one
// is opened if there is none).
async function cancelTask(taskId, button, out) {
  const inCard = button.closest(".task") !== null;
  out.textContent = "";
  button.disabled = true;
  let task;
  try {
    task = (await request("POST", "api/gen/cancel/" + encodeURIComponent(taskId))).data;
  } catch (err) {
    out.textContent = failure(err);
    button.disabled = false;
    if (err.status === 404 || err.status === 409) refreshStale();
    return;
  }
  const card = state.tasks.get(taskId);
  if (card) failed(card, task);
  else addTask(taskId, { prompt: task.prompt, type: task.type });
  showCredits();
  // The Cancel button is replaced by Delete: the focus goes to it, on the
  // card or on the row drawn again.
  if (inCard && card) $(".actions button", card).focus();
  await loadHistory(state.history.page);
  if (!inCard) focusOr(`#history-table tr[data-task-id="${CSS.escape(taskId)}"] .delete-task`, "#history-heading");
}

// focusOr moves the focus to the first of the selectors that matches.
function focusOr(...selectors) {
  for (const sel of selectors) {
    const e = $(sel);
    if (e) {
      if (e.tagName === "H2") e.tabIndex = -1;
      e.focus();
      return;
    }
  }
}

// confirmDelete asks, in a modal dialog, whether to delete; it resolves
// to true only for "Delete for good". Escape and "Keep it" keep the task.
function confirmDelete(label) {
  const dlg = $("#confirm-delete");
  $("#confirm-text").textContent = `"${label}": its videos and images are deleted at once and its download links stop working. ` +
    "The credit ledger keeps its charge and refund.";
  return new Promise((resolve) => {
    const done = (yes) => {
      $("#confirm-yes").removeEventListener("click", yes1);
      $("#confirm-keep").removeEventListener("click", no1);
      dlg.removeEventListener("close", no1);
      if (dlg.open) dlg.close();
      resolve(yes);
    };
    const yes1 = () => done(true);
    const no1 = () => done(false);
    $("#confirm-yes").addEventListener("click", yes1);
    $("#confirm-keep").addEventListener("click", no1);
    dlg.addEventListener("close", no1);
    dlg.showModal();
  });
}

// deleteTask deletes a finished task once confirmed: its card goes from
// the page, and the history is shown again without it.
async function deleteTask(taskId, label, button, out) {
  out.textContent = "";
  if (!(await confirmDelete(label))) {
    button.focus();
    return;
  }
  button.disabled = true;
  try {
    await request("DELETE", "api/gen/tasks/" + encodeURIComponent(taskId));
  } catch (err) {
    out.textContent = failure(err);
    button.disabled = false;
    button.focus();
    if (err.status === 404 || err.status === 409) refreshStale();
    return;
  }
  const card = state.tasks.get(taskId);
  if (card) {
    state.tasks.delete(taskId);
    card.remove();
    if (state.tasks.size === 0) $("#tasks-empty").hidden = false;
  }
  $("#history-note").textContent = `Deleted "${label}".`;
  // The focus was on the removed button: it goes to the history's heading.
  focusOr("#history-heading");
  const page = state.history.page;
  await loadHistory(page);
  if (page > 0 && $("#history-table tbody .task-row") === null) loadHistory(page - 1);
}

// refreshStale shows the history again after a 404 or 409, which say the
// page showed a task as it no longer is (another tab or client cancelled,
// deleted or finished it); the error stays shown.
async function refreshStale() {
  await loadHistory(state.history.page);
  if (!document.activeElement || document.activeElement === document.body) focusOr("#history-heading");
}

// failure is the sentence for an action's error: the contract's message,
// with its code for the refusals a stale view meets (409, 404).
function failure(err) {
  const msg = describe(err);
  return err instanceof APIError && (err.status === 409 || err.status === 404) && err.code ? `${msg} (${err.code})` : msg;
}

// ---------------------------------------------------------------- credits

const limitNames = {
  requestsPerMinute: "Requests per minute",
  requestsPerDay: "Requests per day",
  startsPerMinute: "Starts per minute",
  concurrentGenerations: "Generations at once",
};

// showCredits shows the balance, the credits held by generations in
// flight, the tier, each limit with what is left of it, and the ledger
// page being looked at (by its cursor). It is called when a key is
// accepted, after each start and cancel, and when a followed generation
// ends.
async function showCredits() {
  const c = state.credits;
  const seq = ++c.seq;
  const limit = Math.min(100, Math.max(1, parseInt($("#ledger-limit").value, 10) || 20));
  $("#ledger-limit").value = String(limit);
  const q = new URLSearchParams({ limit: String(limit) });
  const n = c.page;
  if (n > 0 && c.cursors[n]) q.set("cursor", c.cursors[n]);
  let data;
  try {
    data = (await request("GET", "api/gen/credits?" + q)).data;
  } catch (err) {
    if (seq === c.seq && c === state.credits) $("#credits-error").textContent = describe(err);
    return;
  }
  if (seq !== c.seq || c !== state.credits) return; // a newer request, or another key, answers
  $("#credits-error").textContent = "";
  $("#credits-balance").textContent = `${data.balance} credits`;
  $("#credits-held").textContent = `${data.held} credits (${data.inFlight} generation${data.inFlight === 1 ? "" : "s"})`;
  $("#credits-tier").textContent = data.tier;
  $("#limits-table tbody").replaceChildren(...Object.keys(limitNames).filter((k) => data.limits[k]).map((k) => {
    const w = data.limits[k];
    return el("tr", {}, el("th", { scope: "row" }, limitNames[k]), el("td", {}, String(w.limit)),
      el("td", {}, String(w.remaining)), el("td", {}, w.reset ? new Date(w.reset).toLocaleTimeString() : "-"));
  }));
  c.cursors.length = n + 1;
  c.cursors[n + 1] = data.pagination.nextCursor || "";
  const kinds = { grant: "Granted", charge: "Charged", refund: "Refunded" };
  const body = $("#ledger-table tbody");
  body.replaceChildren(...data.ledger.map((e) => el("tr", { class: "ledger-" + e.kind },
    el("td", {}, new Date(e.at).toLocaleString()),
    el("td", {}, (kinds[e.kind] || e.kind) + (e.note ? ` (${e.note})` : "")),
    el("td", { class: "amount" }, (e.amount > 0 ? "+" : "") + e.amount),
    el("td", {}, String(e.balance)),
    el("td", {}, e.taskId ? el("code", {}, e.taskId) : ""))));
  if (data.ledger.length === 0) body.append(el("tr", {}, el("td", { colSpan: 5 }, "No movements.")));
  $("#ledger-page").textContent = `Page ${n + 1}` + (data.pagination.hasMore ? "" : n > 0 ? " (the oldest)" : "");
  $("#ledger-prev").disabled = n === 0;
  $("#ledger-next").disabled = !data.pagination.hasMore;
}

function ledgerPage(n) {
  state.credits.page = Math.max(0, n);
  showCredits();
}

// ---------------------------------------------------------------- history

// loadHistory shows page n of the history: page 0 has no cursor, each
// next page the cursor the page before it answered.
async function loadHistory(n) {
  const h = state.history;
  const seq = ++h.seq;
  const q = new URLSearchParams();
  const limit = Math.min(100, Math.max(1, parseInt($("#history-limit").value, 10) || 20));
  $("#history-limit").value = String(limit);
  q.set("limit", String(limit));
  const st = $("#history-status").value;
  if (st) q.set("status", st);
  if (n > 0 && h.cursors[n]) q.set("cursor", h.cursors[n]);
  else if (n > 0) q.set("skip", String(n * limit));
  let data;
  try {
    data = (await request("GET", "api/gen/history?" + q)).data;
  } catch (err) {
    if (seq === h.seq && h === state.history) $("#history-page").textContent = describe(err);
    return;
  }
  // Only the latest request's answer is shown (a refresh after a
  // completion may cross a click on Older).
  if (seq !== h.seq || h !== state.history) return;
  h.page = n;
  h.cursors.length = n + 1;
  h.cursors[n + 1] = data.pagination.nextCursor || "";
  h.total = data.pagination.total;
  const body = $("#history-table tbody");
  body.replaceChildren(...data.videos.map((t) => el("tr", { class: "task-row", "data-task-id": t.taskId },
    el("td", {}, new Date(t.createdAt).toLocaleString()),
    el("td", {}, t.type),
    el("td", {}, modelName(t.model)),
    el("td", { class: "prompt" }, t.prompt),
    el("td", { class: "status-" + t.status }, t.status + (t.status === "failed" && t.creditsRefunded ? ` (${t.creditsRefunded} refunded)` : "")),
    el("td", {}, String(t.creditsCost)),
    el("td", {}, String(t.videoCount ?? 0)),
    el("td", { class: "row-actions" }, el("button", { type: "button", class: "secondary open-task", "data-task-id": t.taskId, "aria-label": "Open " + t.prompt }, "Open"),
      " ", actionButton(t.taskId, t.status, t.prompt, $("#history-error"))))));
  if (data.videos.length === 0) body.append(el("tr", {}, el("td", { colSpan: 8 }, "No generations" + (st ? " with this status" : "") + " yet.")));
  const pages = Math.max(1, Math.ceil(h.total / limit));
  $("#history-page").textContent = `Page ${n + 1} of ${pages} (${h.total} generation${h.total === 1 ? "" : "s"})`;
  $("#history-prev").disabled = n === 0;
  $("#history-next").disabled = !data.pagination.hasMore;
}

// ---------------------------------------------------------------- start

async function main() {
  try {
    const res = await fetch("playground/limits.json", { credentials: "omit" });
    state.limits = await res.json();
  } catch {
    $("#key-status").textContent = "The page could not load its settings; reload it.";
    return;
  }
  $("#key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const k = $("#api-key").value.trim();
    if (!k) {
      $("#key-status").className = "error";
      $("#key-status").textContent = "Paste an API key first (it begins with gen_).";
      $("#api-key").focus();
      return;
    }
    useKey(k);
  });
  $("#forget-key").addEventListener("click", forgetKey);
  const form = $("#gen-form");
  form.addEventListener("submit", start);
  for (const r of document.querySelectorAll("input[name=mode]")) r.addEventListener("change", () => { fillModels(); update(); });
  $("#model").addEventListener("change", () => { fillResolutions(); update(); });
  $("#durationSeconds").addEventListener("change", () => { fillResolutions(); update(); });
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  for (const box of document.querySelectorAll(".drop")) {
    if (box.dataset.field === refsField) wireRefs(box);
    else wireDrop(box);
  }
  $("#extend-form").addEventListener("submit", startExtend);
  $("#extend-prompt").addEventListener("input", quoteExtend);
  $("#extend-cancel").addEventListener("click", () => $("#extend-dialog").close());
  $("#extend-dialog").addEventListener("close", extendClosed);
  $("#history-form").addEventListener("submit", (e) => { e.preventDefault(); state.history.cursors = [""]; loadHistory(0); });
  $("#history-prev").addEventListener("click", () => loadHistory(state.history.page - 1));
  $("#history-next").addEventListener("click", () => loadHistory(state.history.page + 1));
  $("#ledger-form").addEventListener("submit", (e) => { e.preventDefault(); state.credits.cursors = [""]; ledgerPage(0); });
  $("#ledger-prev").addEventListener("click", () => ledgerPage(state.credits.page - 1));
  $("#ledger-next").addEventListener("click", () => ledgerPage(state.credits.page + 1));
  $("#history-table").addEventListener("click", (e) => {
    const b = e.target.closest(".open-task");
    if (b) addTask(b.dataset.taskId, { prompt: b.closest("tr").querySelector(".prompt").textContent });
  });
  const saved = apiKey.get();
  if (saved) useKey(saved);
}

main();
