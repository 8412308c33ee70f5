// The dashboard's shell: routes (#/, #/topic/T, #/topic/T/msg/ID, #/deadletters, #/dlq/T), the
// header (node online/offline, token), and the refresh loop: the view on screen refreshes every
// few seconds (`?refresh=N` in the address sets N; default 5), not while the tab is hidden.
import {api, onUnauthorized, setToken, token} from './api.js';
import {DeadLettersView, DeadLetterTopicView} from './deadletters.js';
import {MessageView} from './message.js';
import {OverviewView} from './overview.js';
import {TopicView} from './topic.js';
import {act, confirmDialog, fill, fillIfChanged, fmtClock, h, timeZone} from './ui.js';

const refreshSeconds = Math.max(1, Number(new URLSearchParams(location.search).get('refresh')) || 5);
const main = document.getElementById('main');
const node = document.getElementById('node');
const updated = document.getElementById('updated');
let view = null;
let busy = false;
let online = null;
let scope = '*';  // the token's namespace, as /dashboard/api/history tells it ('*': every one)

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '')
      .map((p) => decodeURIComponent(p));
  if (parts[0] === 'topic' && parts.length === 2) return new TopicView(parts[1]);
  if (parts[0] === 'topic' && parts[2] === 'msg' && parts.length === 4) {
    return new MessageView(parts[1], parts[3]);
  }
  if (parts[0] === 'deadletters') return new DeadLettersView();
  if (parts[0] === 'dlq' && parts.length === 2) return new DeadLetterTopicView(parts[1]);
  return new OverviewView();
}

function navigate() {
  view = parseRoute();
  fill(main, view.el);
  for (const a of document.querySelectorAll('header nav a')) {
    const here = location.hash || '#/';
    a.classList.toggle('active', a.getAttribute('href') === here ||
      (a.getAttribute('href') === '#/deadletters' && here.startsWith('#/dlq/')));
  }
  tick(true);
}

async function tick(force) {
  if (busy || (!force && document.visibilityState !== 'visible')) return;
  busy = true;
  try {
    await view.refresh();
    await refreshNode();
    updated.textContent = `Updated ${fmtClock(Date.now())} · ${timeZone}`;
  } finally {
    busy = false;
  }
}

async function refreshNode() {
  try {
    const state = await api.node();
    online = state.online;
    scope = state.namespace || '*';
  } catch (e) {
    online = null;
  }
  renderNode();
}

function renderNode() {
  const label = online === null ? 'unknown' : online ? 'online' : 'offline';
  // Setting the node online or offline is the operator's (an admin of '*').
  fillIfChanged(node, [label, scope], () => [
    scope === '*' ? null : h('span', {class: 'pill', testid: 'namespace',
      title: 'This token sees and acts on this namespace\'s topics only'}, `Namespace ${scope}`),
    h('span', {class: `pill ${label}`, testid: 'node-state',
      title: 'What /camellia/health/status tells load balancers'}, `Node ${label}`),
    online === null || scope !== '*' ? null : h('button', {class: 'btn small',
      testid: 'node-toggle', onclick: toggleNode}, online ? 'Set offline…' : 'Set online')]);
}

async function toggleNode() {
  if (online && !await confirmDialog({title: 'Set this node offline?', danger: true,
    confirm: 'Set offline', body: h('p', {}, 'Its health status answers 500, so load balancers ' +
        'stop sending it traffic. It keeps serving the requests it gets.')})) return;
  if (await act(() => api.setOnline(!online), online ? 'Node set offline.' : 'Node set online.')) {
    await refreshNode();
  }
}

function tokenDialog(reason) {
  const input = h('input', {type: 'password', id: 'token-input', autocomplete: 'off',
    value: token()});
  const save = h('button', {type: 'submit', class: 'btn primary'}, 'Use token');
  const clear = h('button', {type: 'button', class: 'btn'}, 'Forget token');
  const cancel = h('button', {type: 'button', class: 'btn'}, 'Cancel');
  const dlg = h('dialog', {class: 'dialog', testid: 'token-dialog'},
      h('form', {method: 'dialog'}, h('h2', {}, 'Access token'),
          reason ? h('p', {class: 'error-box'}, reason) : null,
          h('p', {class: 'muted'}, 'Sent as “Authorization: Bearer …” on every call, kept in this ' +
              'tab only (sessionStorage).'),
          h('label', {for: 'token-input'}, 'Admin token'), input,
          h('div', {class: 'dialog-actions'}, clear, cancel, save)));
  save.addEventListener('click', () => setToken(input.value.trim()));
  clear.addEventListener('click', () => {
    setToken('');
    dlg.close();
  });
  cancel.addEventListener('click', () => dlg.close());
  dlg.addEventListener('close', () => {
    dlg.remove();
    renderToken();
    tick(true);
  });
  document.body.append(dlg);
  dlg.showModal();
  input.focus();
}

function renderToken() {
  const btn = document.getElementById('token');
  btn.textContent = token() ? 'Token ✓' : 'Token';
}

let asked = false;
onUnauthorized((status) => {
  if (asked || document.querySelector('dialog[open]')) return;
  asked = true;
  tokenDialog(status === 401 ? 'The server asks for a token.' :
    'This token may not do that: use an admin token.');
});

document.getElementById('token').addEventListener('click', () => {
  asked = false;
  tokenDialog();
});
window.addEventListener('hashchange', navigate);
document.addEventListener('visibilitychange', () => tick(false));
setInterval(() => tick(false), refreshSeconds * 1000);
renderToken();
navigate();
