// The dashboard's only way to the server: the public HTTP API (docs/api.md,
// docs/api-extensions.md) for every action, and the two read-only endpoints of the dashboard
// (docs/dashboard.md) for the overview and the charts. When the user gave a token, every call
// carries it as `Authorization: Bearer <token>`; the token lives in sessionStorage only (gone
// when the tab closes, never in a URL or a cookie).
//
// Names: every topic name the dashboard sends is one the server gave it for this token (a
// namespace's admin reads and acts on its own topics under their client names, as its clients
// do). An admin of '*' also sees other namespaces' topics, as `ns/topic` with a `namespace`
// member: those are shown only, never sent back (its token addresses the unnamed namespace).

const BASE = '/camellia/delayQueue/';
const TOKEN_KEY = 'chronoq.token';

export class ApiError extends Error {
  // code: the answer's application code (or the HTTP status); http: the HTTP status (0: none).
  constructor(message, code, http) {
    super(message);
    this.code = code;
    this.http = http;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

let unauthorized = () => {};
// Called with the HTTP status when the server refuses the token (401) or its role (403).
export function onUnauthorized(fn) {
  unauthorized = fn;
}

// One call. Parameters go in the query string (GET) or a form body (POST), as in the README's
// curl examples. Resolves with the JSON answer when its code is 200; rejects with an ApiError
// carrying the server's sentence otherwise.
async function call(method, path, params) {
  const headers = {Accept: 'application/json'};
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null) form.append(k, String(v));
  }
  let url = path;
  let body;
  if (method === 'GET') {
    const q = form.toString();
    if (q) url += `?${q}`;
  } else {
    body = form;
  }
  let res;
  try {
    res = await fetch(url, {method, headers, body, cache: 'no-store', credentials: 'omit'});
  } catch (e) {
    throw new ApiError(`The server cannot be reached (${e.message}).`, 0, 0);
  }
  if (res.status === 401 || res.status === 403) {
    unauthorized(res.status);
    throw new ApiError(
        res.status === 401 ? 'The server asks for a token: enter an admin token.'
                           : 'This token may not do that: an admin token is needed.',
        res.status, res.status);
  }
  let json;
  try {
    json = await res.json();
  } catch (e) {
    throw new ApiError(`HTTP ${res.status}: the answer is not JSON.`, res.status, res.status);
  }
  if (!res.ok || (json.code !== undefined && json.code !== 200)) {
    throw new ApiError(json.msg || `HTTP ${res.status}`, json.code ?? res.status, res.status);
  }
  return json;
}

const get = (op, params) => call('GET', BASE + op, params);
const post = (op, params) => call('POST', BASE + op, params);

export const api = {
  // The dashboard's own reads.
  topics: (params) => call('GET', '/dashboard/api/topics', params),
  history: (topic) => call('GET', '/dashboard/api/history', topic ? {topic} : {}),
  node: () => call('GET', '/dashboard/api/history', {series: false}),

  // Topics.
  topicInfo: (topic) => get('getTopicInfo', {topic}).then((a) => a.data),
  topicConfig: (topic) => get('getTopicConfig', {topic}).then((a) => a.topicConfig),
  setTopicConfig: (topic, fields) =>
    post('setTopicConfig', {topic, ...fields}).then((a) => a.topicConfig),
  deleteTopicConfig: (topic) => post('deleteTopicConfig', {topic}),
  pauseTopic: (topic) => post('pauseTopic', {topic}),
  resumeTopic: (topic) => post('resumeTopic', {topic}),
  purgeTopic: (topic) => post('purgeTopic', {topic}).then((a) => a.purged),

  // Messages.
  listMsg: (topic, status, cursor, limit) =>
    get('listMsg', {topic, status: status || undefined, cursor: cursor || undefined, limit}),
  getMsg: (topic, msgId) => post('getMsg', {topic, msgId}).then((a) => a.delayMsg),
  getMsgHistory: (topic, msgId) =>
    post('getMsgHistory', {topic, msgId}).then((a) => a.history),
  updateMsg: (topic, msgId, fields) =>
    post('updateMsg', {topic, msgId, ...fields}).then((a) => a.delayMsg),
  deleteMsg: (topic, msgId, release) => post('deleteMsg', {topic, msgId, release: !!release}),
  redriveOne: (topic, msgId) => post('redriveMsg', {topic, msgId}).then((a) => a.redriven),
  // Every ready dead letter of `topic`, 1,000 per call, until a call redrives fewer.
  async redriveAll(topic) {
    let total = 0;
    for (;;) {
      const n = (await post('redriveMsg', {topic, limit: 1000})).redriven;
      total += n;
      if (n < 1000) return total;
    }
  },

  // The node (camellia's health endpoints).
  setOnline: (online) => call('POST', `/camellia/health/${online ? 'online' : 'offline'}`),
};
