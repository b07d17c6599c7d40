// The server's HTTP API as the console calls it: every request carries the signed-in credential.
// The credential lives in sessionStorage (this tab only), never in a URL or a cookie.

const storageKey = "speakersync.token";

export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const credential = {
  get: () => sessionStorage.getItem(storageKey) || "",
  set: (token) => sessionStorage.setItem(storageKey, token),
  clear: () => sessionStorage.removeItem(storageKey),
};

async function request(method, path, body) {
  const headers = {};
  const token = credential.get();
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const type = response.headers.get("content-type") || "";
  if (!response.ok) {
    let code = "http_" + response.status, message = response.statusText;
    if (type.startsWith("application/json")) {
      const failure = await response.json().catch(() => null);
      if (failure && failure.error) ({ code, message } = failure.error);
    }
    throw new APIError(response.status, code, message);
  }
  return type.startsWith("application/json") ? response.json() : response.text();
}

/// A multipart/form-data POST (an uploaded recording): the browser writes the body and its boundary.
async function postForm(path, form) {
  const token = credential.get();
  const response = await fetch(path, { method: "POST", headers: token ? { Authorization: `Bearer ${token}` } : {}, body: form });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new APIError(response.status, body?.error?.code ?? "http_" + response.status, body?.error?.message ?? response.statusText);
  }
  return body;
}

export const api = {
  get: (path) => request("GET", path),
  postForm,
  post: (path, body) => request("POST", path, body),
  put: (path, body) => request("PUT", path, body),
  /// A binary body (stored audio) as a Blob, with the credential; null when there is none (404).
  blob: async (path) => {
    const token = credential.get();
    const response = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    if (response.status === 404) return null;
    if (!response.ok) throw new APIError(response.status, "http_" + response.status, response.statusText);
    return response.blob();
  },
  /// Whether a binary body (stored audio) exists, reading two bytes of it rather than all of it.
  exists: async (path) => {
    const token = credential.get();
    const headers = { Range: "bytes=0-1" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(path, { headers });
    await response.body?.cancel();
    if (response.status === 404) return false;
    if (!response.ok) throw new APIError(response.status, "http_" + response.status, response.statusText);
    return true;
  },
  /// The response body as text (exports), with the credential; the caller saves it as a file.
  text: (path) => request("GET", path).then((body) => (typeof body === "string" ? body : JSON.stringify(body, null, 2))),
};

/// `wss://` for an `https:` page, `ws://` otherwise, on this page's host.
export function webSocketURL(path) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}
