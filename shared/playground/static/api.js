// The playground's client of the API: the key in session storage, one
// request function that reads the contract's bodies (the error body, the
// nested 429 body, Retry-After), and direct uploads as the Go client
// makes them (shared/client/upload.go).

const keyName = "gen.apiKey";

// The key lives in this tab's sessionStorage only: never a cookie (the
// service would not read one, and a cookie goes wherever the browser
// sends it), never a URL, never a log line.
export const apiKey = {
  get() { return sessionStorage.getItem(keyName) || ""; },
  set(k) { sessionStorage.setItem(keyName, k); },
  clear() { sessionStorage.removeItem(keyName); },
};

// APIError is an answer other than 2xx, read into one shape whatever the
// body's form: status, code, message, and what goes with them.
export class APIError extends Error {
  constructor(status, body, retryAfter) {
    let code = "", message = "", details = {};
    if (body && typeof body.error === "object" && body.error !== null) {
      // The 429 body: {"error": {"code", "message", "details": {...}}}.
      code = body.error.code || "";
      message = body.error.message || "";
      details = body.error.details || {};
    } else if (body) {
      code = body.error || "";
      message = body.message || "";
      details = body.details || {};
    }
    if (!message) message = `The service answered ${status}.`;
    super(message);
    this.status = status;
    this.code = code;
    this.field = body && body.field;
    this.required = body && body.required;
    this.available = body && body.available;
    this.details = details;
    const ra = Number.isFinite(retryAfter) ? retryAfter : Number(details.retry_after);
    this.retryAfter = Number.isFinite(ra) && ra >= 0 ? ra : null;
  }
}

// retryAfterOf reads a Retry-After header in seconds, or NaN.
function retryAfterOf(res) {
  const v = res.headers.get("Retry-After");
  return v === null ? NaN : parseInt(v, 10);
}

// request makes one call to the API with the key. Paths are relative
// (api/gen/models), so that the page works under API Gateway's stage
// prefix (/Prod/) as well as at a server's root. json is sent as a JSON
// body, form (a FormData) as multipart; headers are added. It resolves to
// {data, retryAfter, headers} for a 2xx and rejects with an APIError
// otherwise (status 0 when the service could not be reached).
export async function request(method, path, { json, form, headers } = {}) {
  const h = new Headers(headers || {});
  h.set("X-API-Key", apiKey.get());
  let body;
  if (json !== undefined) {
    h.set("Content-Type", "application/json");
    body = JSON.stringify(json);
  } else if (form) {
    body = form;
  }
  let res;
  try {
    res = await fetch(path, { method, headers: h, body, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" });
  } catch (e) {
    throw new APIError(0, { error: "NETWORK", message: "The service could not be reached. Check your connection and try again." });
  }
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  const retryAfter = retryAfterOf(res);
  if (!res.ok) throw new APIError(res.status, data, retryAfter);
  return { data, retryAfter: Number.isFinite(retryAfter) ? retryAfter : null, headers: res.headers };
}

// followEvents reads a task's live event stream (path: its
// api/gen/status/{taskId}/events), with fetch rather than EventSource so
// that the key goes in a header, and calls onTask with the status body of
// each event, in order, until onTask returns true (the end). A stream that
// ends early (a proxy's timeout, or the stream's 14 minutes) is
// reconnected with Last-Event-ID, so no state comes twice. It resolves to
// true once onTask has ended it, false when the stream cannot be had (an
// error answer, a network failure, a browser without streams): the caller
// then polls the status instead.
export async function followEvents(path, onTask) {
  let last = "", fails = 0;
  for (;;) {
    const h = new Headers({ "X-API-Key": apiKey.get(), Accept: "text/event-stream" });
    if (last) h.set("Last-Event-ID", last);
    let res;
    try {
      res = await fetch(path, { headers: h, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" });
    } catch {
      return false;
    }
    if (!res.ok || !res.body || typeof TextDecoderStream === "undefined") return false;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "", id = "", data = "", heard = false;
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch {
        break;
      }
      if (chunk.done) break;
      heard = true;
      buf += chunk.value;
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i).replace(/\r$/, "");
        buf = buf.slice(i + 1);
        if (line === "") {
          if (data) {
            last = id || last;
            if (onTask(JSON.parse(data))) {
              reader.cancel().catch(() => {});
              return true;
            }
          }
          id = data = "";
          continue;
        }
        const c = line.indexOf(":");
        const field = c < 0 ? line : line.slice(0, c);
        let value = c < 0 ? "" : line.slice(c + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "id") id = value;
        if (field === "data") data += (data ? "\n" : "") + value;
      }
    }
    fails = heard ? 0 : fails + 1;
    if (fails > 3) return false;
    await new Promise((r) => setTimeout(r, 500 * (fails + 1)));
  }
}

// newIdempotencyKey is a fresh random Idempotency-Key: a repeated start
// with it (a retry after a lost answer) gets the first answer instead of
// a second task and charge. getRandomValues works outside secure
// contexts too, unlike randomUUID.
export function newIdempotencyKey() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// sniffImage is the type of an image by its first bytes, as the service
// decides it: "image/jpeg", "image/png" or "".
export async function sniffImage(file) {
  const head = new Uint8Array(await file.slice(0, 8).arrayBuffer());
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (head.length >= 8 && png.every((v, i) => head[i] === v)) return "image/png";
  return "";
}

// uploadImage sends an image through a direct upload: the service signs a
// form (POST /api/gen/uploads), the file goes to the storage's URL with
// that form and no key, and the start names it by its upload id.
export async function uploadImage(file, contentType) {
  const { data: up } = await request("POST", "api/gen/uploads", { json: { contentType } });
  if (file.size > up.maxBytes) {
    throw new APIError(413, { error: "FILE_TOO_LARGE", message: `The file "${file.name}" is larger than the limit of ${up.maxBytes} bytes.` });
  }
  const form = new FormData();
  for (const [k, v] of Object.entries(up.fields || {})) form.append(k, v);
  form.append(up.fileField || "file", file, file.name);
  let res;
  try {
    res = await fetch(up.uploadUrl, { method: "POST", body: form, credentials: "omit", referrerPolicy: "no-referrer" });
  } catch (e) {
    throw new APIError(0, { error: "NETWORK", message: `The upload of "${file.name}" could not reach the storage.` });
  }
  if (!res.ok) {
    const text = await res.text();
    if (text.includes("EntityTooLarge")) {
      throw new APIError(413, { error: "FILE_TOO_LARGE", message: `The file "${file.name}" is larger than the limit of ${up.maxBytes} bytes.` });
    }
    throw new APIError(res.status, { error: "UPLOAD_FAILED", message: `The storage refused the upload of "${file.name}" (${res.status}).` });
  }
  return up.uploadId;
}
