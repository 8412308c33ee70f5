// Safe DOM building, formatting and the dialogs the views share.
//
// Every value from the server (topics, msgIds, payloads, error sentences) reaches the page as a
// text node or an attribute value set through the DOM: nothing is ever parsed as HTML (no
// innerHTML, no insertAdjacentHTML), so `<script>`, quotes and broken markup show as text.

// h('a', {href: '#/x', class: 'link', onclick: fn, testid: 'row'}, 'text', child, [more])
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') {
      el.className = v;
    } else if (k === 'testid') {
      el.dataset.testid = v;
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'href') {
      // Links are built by the views: in-page routes and this server's paths only.
      const s = String(v);
      if (s.startsWith('#') || s.startsWith('/')) el.setAttribute('href', s);
    } else if (k === 'value') {
      el.value = v;
    } else if (k === 'checked') {
      el.checked = !!v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replaces the children of `el`.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Like fill, but only when `key` differs from the last time: a refresh that brings nothing new
// leaves the elements (and the keyboard focus on one of them) in place.
export function fillIfChanged(el, key, build) {
  const k = typeof key === 'string' ? key : JSON.stringify(key);
  if (el.dataset.key === k) return el;
  el.dataset.key = k;
  return fill(el, build());
}

// --- Routes: every route part is percent-encoded, so any topic or msgId makes a valid link.
export function route(...parts) {
  return `#/${parts.map((p) => encodeURIComponent(p)).join('/')}`;
}

// --- Formatting.
const intFmt = new Intl.NumberFormat();
const dec1 = new Intl.NumberFormat(undefined, {maximumFractionDigits: 1});
const dec2 = new Intl.NumberFormat(undefined, {maximumFractionDigits: 2});

export function fmtInt(n) {
  return n === null || n === undefined ? '—' : intFmt.format(n);
}

export function fmtNum(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  if (v === 0) return '0';
  return Math.abs(v) < 10 ? dec2.format(v) : Math.abs(v) < 1000 ? dec1.format(v) : intFmt.format(Math.round(v));
}

export function fmtRate(v) {
  return v === null || v === undefined ? '—' : `${fmtNum(v)}/s`;
}

// 850 ms, 12.5 s, 3 min 20 s, 2 h 5 min, 3 d 4 h.
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  const neg = ms < 0;
  ms = Math.abs(ms);
  let out;
  if (ms < 1000) out = `${dec1.format(ms)} ms`;
  else if (ms < 60e3) out = `${dec1.format(ms / 1000)} s`;
  else if (ms < 3600e3) out = pair(ms, 60e3, 'min', 1e3, 's');
  else if (ms < 86400e3) out = pair(ms, 3600e3, 'h', 60e3, 'min');
  else out = pair(ms, 86400e3, 'd', 3600e3, 'h');
  return neg ? `−${out}` : out;
}

function pair(ms, big, bigUnit, small, smallUnit) {
  const a = Math.floor(ms / big);
  const b = Math.floor((ms - a * big) / small);
  return b ? `${intFmt.format(a)} ${bigUnit} ${b} ${smallUnit}` : `${intFmt.format(a)} ${bigUnit}`;
}

const dateFmt = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'medium'});
const clockFmt = new Intl.DateTimeFormat(undefined, {timeStyle: 'short'});
const relFmt = new Intl.RelativeTimeFormat(undefined, {numeric: 'auto'});

export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

export function fmtTime(ms) {
  return ms === null || ms === undefined ? '—' : dateFmt.format(new Date(ms));
}

export function fmtClock(ms) {
  return clockFmt.format(new Date(ms));
}

// "in 5 minutes", "3 seconds ago".
export function fmtRelative(ms, now = Date.now()) {
  if (ms === null || ms === undefined) return '';
  const d = (ms - now) / 1000;
  const a = Math.abs(d);
  if (a < 60) return relFmt.format(Math.round(d), 'second');
  if (a < 3600) return relFmt.format(Math.round(d / 60), 'minute');
  if (a < 86400) return relFmt.format(Math.round(d / 3600), 'hour');
  if (a < 86400 * 60) return relFmt.format(Math.round(d / 86400), 'day');
  if (a < 86400 * 730) return relFmt.format(Math.round(d / (86400 * 30)), 'month');
  return relFmt.format(Math.round(d / (86400 * 365)), 'year');
}

// A time as two lines: the browser's local time, and how far from now.
export function timeCell(ms) {
  if (ms === null || ms === undefined) return '—';
  return h('span', {class: 'time', title: new Date(ms).toISOString()},
      h('span', {}, fmtTime(ms)), ' ', h('span', {class: 'muted'}, fmtRelative(ms)));
}

export const STATUS = {
  1: 'WAITING', 2: 'READY', 3: 'CONSUMING', 4: 'CONSUME_OK', 5: 'EXPIRE', 6: 'RETRY_EXHAUST',
  7: 'DELETE',
};

export function statusBadge(status) {
  return h('span', {class: `badge s${status}`, testid: 'status'}, STATUS[status] || String(status));
}

export function bytes(s) {
  return new TextEncoder().encode(s).length;
}

// Pretty JSON when the payload is a JSON object or array, else the text as it is.
export function prettyPayload(s) {
  const t = s.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return {text: JSON.stringify(JSON.parse(t), null, 2), json: true};
    } catch (e) {
      // not JSON: shown as it is
    }
  }
  return {text: s, json: false};
}

export function preview(s, n = 80) {
  const one = s.replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

// --- Feedback.
export function toast(message, kind = 'ok') {
  let box = document.getElementById('toasts');
  const t = h('div', {class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status',
    testid: 'toast'}, message);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 9000 : 4000);
}

// Runs an action, then tells how it went; resolves with its value (undefined when it failed).
export async function act(fn, success) {
  try {
    const v = await fn();
    if (success) toast(typeof success === 'function' ? success(v) : success);
    return v;
  } catch (e) {
    toast(e.message, 'error');
    return undefined;
  }
}

// A modal confirmation (native <dialog>: Escape cancels, focus stays inside). Resolves true when
// confirmed. `danger` marks a destructive action: Cancel has the focus.
export function confirmDialog({title, body, confirm = 'Confirm', danger = false}) {
  return new Promise((resolve) => {
    const cancelBtn = h('button', {type: 'button', class: 'btn', testid: 'confirm-cancel'}, 'Cancel');
    const okBtn = h('button', {type: 'submit', class: danger ? 'btn danger' : 'btn primary',
      testid: 'confirm-ok'}, confirm);
    const dlg = h('dialog', {class: 'dialog', testid: 'confirm-dialog'},
        h('form', {method: 'dialog'},
            h('h2', {}, title),
            h('div', {class: 'dialog-body'}, body),
            h('div', {class: 'dialog-actions'}, cancelBtn, okBtn)));
    let result = false;
    okBtn.addEventListener('click', () => { result = true; });
    cancelBtn.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => {
      dlg.remove();
      resolve(result);
    });
    document.body.append(dlg);
    dlg.showModal();
    (danger ? cancelBtn : okBtn).focus();
  });
}

// A labelled form field: label, control, optional hint.
export function field(label, control, hint) {
  if (!control.id) control.id = `f-${Math.random().toString(36).slice(2)}`;
  return h('div', {class: 'field'}, h('label', {for: control.id}, label), control,
      hint ? h('div', {class: 'hint'}, hint) : null);
}

// A table from column titles and rows of cells.
export function table(columns, rows, props = {}) {
  return h('table', {class: 'grid', ...props},
      h('thead', {}, h('tr', {}, columns.map((c) =>
        typeof c === 'string' ? h('th', {scope: 'col'}, c) : c))),
      h('tbody', {}, rows));
}

// A small figure: a label over a big number.
export function stat(label, value, props = {}) {
  return h('div', {class: 'stat', ...props}, h('div', {class: 'stat-label'}, label),
      h('div', {class: 'stat-value'}, value));
}

export function errorBox(e) {
  return h('div', {class: 'error-box', role: 'alert'}, e.message || String(e));
}
