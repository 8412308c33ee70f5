// Message view: every field (times in the browser's time zone and relative to now), the payload
// pretty-printed when it is JSON, and the actions its status allows: trigger now, reschedule,
// edit payload and priority (updateMsg), delete, redrive (a dead letter).
import {api} from './api.js';
import {act, bytes, confirmDialog, errorBox, field, fill, fmtInt, h, prettyPayload, route,
  STATUS, statusBadge, table, timeCell, timeZone} from './ui.js';

// A datetime-local input's value for `ms` in the browser's time zone.
function localInput(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

export class MessageView {
  constructor(topic, msgId) {
    this.topic = topic;
    this.msgId = msgId;
    this.problem = h('div');
    this.head = h('div', {class: 'title-row'});
    this.fields = h('div', {class: 'card'});
    this.payload = h('div', {class: 'card'});
    this.history = h('div', {class: 'card', testid: 'msg-history', hidden: true});
    this.actions = h('div', {class: 'card'});
    this.el = h('section', {testid: 'message-view'},
        h('nav', {class: 'crumbs'}, h('a', {href: '#/'}, 'Overview'), ' / ',
            h('a', {href: route('topic', topic)}, topic), ' / '),
        this.head, this.problem, h('div', {class: 'two'}, this.fields, this.actions),
        this.payload, this.history);
  }

  async refresh() {
    try {
      const m = await api.getMsg(this.topic, this.msgId);
      fill(this.problem);
      this.render(m);
      this.renderHistory(await api.getMsgHistory(this.topic, this.msgId).catch(() => null));
    } catch (e) {
      fill(this.head, h('h1', {class: 'mono'}, this.msgId));
      fill(this.problem, errorBox(e));
      fill(this.fields);
      fill(this.payload);
      fill(this.actions);
    }
  }

  render(m) {
    const changed = !this.shown || this.shown.status !== m.status || this.shown.msg !== m.msg ||
      this.shown.triggerTime !== m.triggerTime || this.shown.priority !== m.priority;
    this.shown = m;
    fill(this.head, h('h1', {class: 'mono', testid: 'msg-id'}, m.msgId),
        h('span', {testid: 'msg-status'}, statusBadge(m.status)));
    const row = (label, value, testid) => h('tr', {}, h('th', {scope: 'row'}, label),
        h('td', {testid}, value));
    const dl = m.deadLetter;
    fill(this.fields, h('h2', {}, 'Fields'), table(['Field', 'Value'], [
      row('topic', h('a', {href: route('topic', m.topic)}, m.topic), 'msg-topic'),
      row('msgId', h('span', {class: 'mono'}, m.msgId)),
      row('status', `${m.status} ${STATUS[m.status] || ''}`),
      row('produceTime', timeCell(m.produceTime)),
      row('triggerTime', timeCell(m.triggerTime), 'msg-trigger'),
      row('expireTime', timeCell(m.expireTime)),
      row('retry', `${fmtInt(m.retry)} of ${fmtInt(m.maxRetry + 1)} deliveries (maxRetry ${fmtInt(m.maxRetry)})`),
      row('priority', fmtInt(m.priority || 0)),
      m.countTrigger ? row('count', `${fmtInt(m.count || 0)} of ${fmtInt(m.countTrigger)}`) : null,
      m.push ? row('push', 'delivered by chronoq to its callback (never pulled)') : null,
      m.attempts ? row('attempts', fmtInt(m.attempts)) : null,
      m.lastError ? row('lastError', m.lastError) : null,
      dl ? row('deadLetter', h('span', {}, 'from ', h('a', {href: route('topic', dl.topic)}, dl.topic),
          ', ended as ', statusBadge(dl.status), ` after ${fmtInt(dl.retry)} deliveries, `,
          timeCell(dl.endTime))) : null,
      m.callback ? row('callback', h('pre', {class: 'payload'}, JSON.stringify(m.callback, null, 2))) :
        null,
    ]), h('p', {class: 'muted'}, `Times in ${timeZone}.`));
    const p = prettyPayload(m.msg);
    fill(this.payload, h('h2', {}, 'Payload ', h('span', {class: 'muted'},
        `${fmtInt(bytes(m.msg))} bytes${p.json ? ', JSON' : ''}`)),
    h('pre', {class: 'payload', testid: 'msg-payload'}, p.text));
    if (changed) this.renderActions(m);
  }

  // The topic's message history (getMsgHistory), when the topic records one; hidden otherwise.
  renderHistory(entries) {
    this.history.hidden = !entries;
    if (!entries) return fill(this.history);
    fill(this.history, h('h2', {}, 'History'), entries.length ?
      table(['Time', 'Event', 'Attempt', 'Reason', 'Node'], entries.map((e) => h('tr', {},
          h('td', {}, timeCell(e.time)), h('td', {}, e.event), h('td', {}, fmtInt(e.attempt)),
          h('td', {}, e.reason || ''), h('td', {class: 'mono'}, e.node)))) :
      h('p', {class: 'muted'}, 'Nothing recorded yet: it was sent before the topic\'s history was on.'));
  }

  renderActions(m) {
    const live = m.status === 1 || m.status === 2;
    const parts = [h('h2', {}, 'Actions')];
    if (live) {
      parts.push(h('div', {class: 'actions'},
          h('button', {class: 'btn primary', testid: 'trigger-now', disabled: m.status === 2,
            onclick: () => this.triggerNow()}, 'Trigger now')));
      const when = h('input', {type: 'datetime-local', step: 1, required: true,
        value: localInput(m.triggerTime), testid: 'reschedule-at'});
      parts.push(h('form', {class: 'inline-form', onsubmit: (e) => {
        e.preventDefault();
        const ms = new Date(when.value).getTime();
        this.update({triggerTime: ms}, 'Rescheduled.');
      }}, field('Reschedule to (local time)', when), h('button', {class: 'btn'}, 'Reschedule')));
      const payload = h('textarea', {rows: 6, spellcheck: 'false', testid: 'edit-payload',
        value: m.msg});
      const priority = h('input', {type: 'number', min: 0, max: 9, step: 1, required: true,
        value: m.priority || 0, testid: 'edit-priority'});
      parts.push(h('form', {class: 'stack-form', onsubmit: (e) => {
        e.preventDefault();
        const fields = {};
        if (payload.value !== m.msg) fields.msg = payload.value;
        if (Number(priority.value) !== (m.priority || 0)) fields.priority = Number(priority.value);
        if (!Object.keys(fields).length) return;
        this.update(fields, 'Saved.');
      }}, field('Payload', payload), field('Priority (0–9, higher first)', priority),
      h('button', {class: 'btn', testid: 'save-msg'}, 'Save payload and priority')));
    } else {
      parts.push(h('p', {class: 'muted'}, m.status === 3 ?
        'Being consumed: it can be deleted, not changed.' :
        'Ended: it is kept for a while to be read, and can no longer change.'));
    }
    const extra = [];
    if (m.deadLetter && m.status === 2) {
      extra.push(h('button', {class: 'btn', testid: 'redrive-msg', onclick: () => this.redrive()},
          'Redrive…'));
    }
    if (m.status <= 3) {
      extra.push(h('button', {class: 'btn danger', testid: 'delete-msg',
        onclick: () => this.remove()}, 'Delete…'));
    }
    parts.push(h('div', {class: 'actions'}, extra));
    fill(this.actions, parts);
  }

  async update(fields, success) {
    const m = await act(() => api.updateMsg(this.topic, this.msgId, fields), success);
    if (m) {
      this.shown = null;
      this.render(m);
    }
  }

  triggerNow() {
    // A trigger time in the past makes it consumable at once (updateMsg).
    return this.update({triggerTime: 0}, 'Triggered: the message is ready.');
  }

  async remove() {
    const release = h('input', {type: 'checkbox', id: 'release'});
    if (!await confirmDialog({title: 'Delete this message?', danger: true, confirm: 'Delete',
      body: [h('p', {}, 'Message ', h('code', {}, this.msgId), ' is never delivered again.'),
        h('label', {class: 'check'}, release, ' Also forget its record now (release)')]})) return;
    if (await act(() => api.deleteMsg(this.topic, this.msgId, release.checked), 'Deleted.')) {
      this.shown = null;
      this.refresh();
    }
  }

  async redrive() {
    if (!await confirmDialog({title: 'Redrive this dead letter?', confirm: 'Redrive',
      body: h('p', {}, 'It goes back to ', h('code', {}, this.shown.deadLetter.topic),
          ' as a new message.')})) return;
    if (await act(() => api.redriveOne(this.topic, this.msgId), 'Redriven.') !== undefined) {
      location.hash = route('topic', this.shown.deadLetter.topic, 'msg', this.msgId);
    }
  }
}
