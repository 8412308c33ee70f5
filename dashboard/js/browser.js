// The message browser: one topic's messages a page at a time through listMsg's cursors (forward
// with nextCursor; back with the cursors already seen), by status. Used by the topic view, and
// by the dead-letter view with a redrive button on each row.
import {api} from './api.js';
import {act, confirmDialog, errorBox, fill, fmtInt, fmtRelative, h, preview, route, STATUS,
  statusBadge, table} from './ui.js';

const LIMIT = 50;

export class MessageBrowser {
  // deadLetters: rows show where each dead letter came from, with a redrive button.
  constructor(topic, {deadLetters = false, onChange = () => {}} = {}) {
    this.topic = topic;
    this.deadLetters = deadLetters;
    this.onChange = onChange;
    this.status = deadLetters ? '2' : '';
    this.cursors = [null];  // the cursor of each page seen; the last is the current page's
    this.next = null;
    this.body = h('div', {class: 'table-wrap'});
    this.pager = h('div', {class: 'pager'});
    const choice = h('select', {'aria-label': 'Status', testid: 'status-filter',
      onchange: (e) => {
        this.status = e.target.value;
        this.first();
      }},
    h('option', {value: ''}, 'In life (waiting, ready, consuming)'),
    Object.entries(STATUS).map(([n, name]) => h('option', {value: n}, `${n} ${name}`)));
    choice.value = this.status;
    this.el = h('div', {class: 'browser'},
        h('div', {class: 'tools'}, choice,
            h('button', {class: 'btn', onclick: () => this.load(), testid: 'browser-reload'},
                'Reload')),
        this.body, this.pager);
  }

  first() {
    this.cursors = [null];
    return this.load();
  }

  async load() {
    try {
      const page = await api.listMsg(this.topic, this.status, this.cursors.at(-1), LIMIT);
      this.next = page.nextCursor;
      this.render(page.delayMsgList);
    } catch (e) {
      fill(this.body, errorBox(e));
    }
  }

  render(list) {
    const now = Date.now();
    const link = (m) => h('a', {href: route('topic', m.topic, 'msg', m.msgId), class: 'mono',
      testid: 'msg-link'}, m.msgId);
    let rows;
    let columns;
    if (this.deadLetters) {
      columns = ['msgId', 'From topic', 'Ended as', 'Deliveries', 'Ended', 'Last error', 'Payload',
        ''];
      rows = list.map((m) => {
        const dl = m.deadLetter || {};
        return h('tr', {testid: 'msg-row', dataset: {msgId: m.msgId}},
            h('td', {}, link(m)),
            h('td', {}, dl.topic ? h('a', {href: route('topic', dl.topic)}, dl.topic) : '—'),
            h('td', {}, dl.status ? statusBadge(dl.status) : '—'),
            h('td', {class: 'num'}, fmtInt(dl.retry)),
            h('td', {}, dl.endTime ? fmtRelative(dl.endTime, now) : '—'),
            h('td', {class: 'clip'}, m.lastError || ''),
            h('td', {class: 'clip mono'}, preview(m.msg)),
            h('td', {}, m.status === 2 ? h('button', {class: 'btn small', testid: 'redrive-one',
              onclick: () => this.redrive(m)}, 'Redrive') : statusBadge(m.status)));
      });
    } else {
      columns = ['msgId', 'Status', 'Priority', 'Trigger', 'Deliveries', 'Payload'];
      rows = list.map((m) => h('tr', {testid: 'msg-row', dataset: {msgId: m.msgId}},
          h('td', {}, link(m)),
          h('td', {}, statusBadge(m.status)),
          h('td', {class: 'num'}, fmtInt(m.priority || 0)),
          h('td', {title: new Date(m.triggerTime).toString()}, fmtRelative(m.triggerTime, now)),
          h('td', {class: 'num'}, `${fmtInt(m.retry)} of ${fmtInt(m.maxRetry + 1)}`),
          h('td', {class: 'clip mono'}, preview(m.msg))));
    }
    fill(this.body, list.length ? table(columns, rows, {testid: 'msg-table'}) :
      h('p', {class: 'empty', testid: 'browser-empty'}, 'No message here.'));
    const page = this.cursors.length;
    fill(this.pager,
        h('button', {class: 'btn', disabled: page === 1, onclick: () => {
          this.cursors.pop();
          this.load();
        }}, '← Previous'),
        h('span', {class: 'muted'}, `Page ${fmtInt(page)}`),
        h('button', {class: 'btn', disabled: !this.next, testid: 'browser-next', onclick: () => {
          this.cursors.push(this.next);
          this.load();
        }}, 'Next →'));
  }

  async redrive(m) {
    const from = (m.deadLetter && m.deadLetter.topic) || 'its source topic';
    if (!await confirmDialog({title: 'Redrive this dead letter?',
      body: [h('p', {}, 'Message ', h('code', {}, m.msgId), ' goes back to ', h('code', {}, from),
          ' as a new message (retry 0) and leaves ', h('code', {}, this.topic), '.')],
      confirm: 'Redrive'})) return;
    const n = await act(() => api.redriveOne(this.topic, m.msgId), 'Redriven.');
    if (n !== undefined) {
      await this.load();
      this.onChange();
    }
  }
}
