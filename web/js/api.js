// The public /v1 API, the console's only way to the server: one call, or every page of a list.
import {signOut, token} from './session.js';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// One API call; the parsed JSON answer (or text for text/plain), or an ApiError with the server's
// own message. A 401 with the saved token signs out: it is wrong or was revoked. `candidate` is a
// token to try instead of the saved one (signing in).
export async function api(method, path, body, candidate) {
  const headers = {};
  const bearer = candidate ?? token();
  if (bearer) headers.Authorization = 'Bearer ' + bearer;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'UNAVAILABLE', 'the suanli server does not answer; is it running?');
  }
  const type = response.headers.get('content-type') || '';
  const payload = type.includes('json')
    ? await response.json().catch(() => null)
    : await response.text();
  if (response.ok) return payload;
  const error =
    payload && payload.error
      ? payload.error
      : {code: 'HTTP_' + response.status, message: String(payload)};
  if (response.status === 401 && candidate === undefined && token()) signOut(error.message);
  throw new ApiError(response.status, error.code, error.message);
}

// A list the server pages ({pods: [...], next_after: ID}), every page of it, as one {[key]: [...]}.
export async function everyPage(path, key) {
  const all = [];
  let next = path;
  for (;;) {
    const page = await api('GET', next);
    all.push(...page[key]);
    if (!page.next_after) return {[key]: all};
    next = path + (path.includes('?') ? '&' : '?') + 'after=' + encodeURIComponent(page.next_after);
  }
}
