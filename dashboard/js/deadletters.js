// Dead letters: the topics that sent dead letters since the server started (a page at a time,
// each with its dead-letter topic and how many wait there), and one dead-letter topic's messages
// with redrive one / redrive all.
import {api} from './api.js';
import {MessageBrowser} from './browser.js';
import {act, confirmDialog, errorBox, fill, fmtInt, h, route, stat, table} from './ui.js';

const PAGE = 20;

export class DeadLettersView {
  constructor() {
    this.offset = 0;
    this.problem = h('div');
    this.rows = h('div', {class: 'table-wrap'});
    this.pager = h('div', {class: 'pager'});
    const name = h('input', {id: 'dlq-name', required: true, autocomplete: 'off',
      spellcheck: 'false', placeholder: 'orders-dlq'});
    this.el = h('section', {testid: 'deadletters-view'}, h('h1', {}, 'Dead letters'),
        h('form', {class: 'inline-form', onsubmit: (e) => {
          e.preventDefault();
          location.hash = route('dlq', name.value);
        }}, h('label', {for: 'dlq-name'}, 'Open a dead-letter topic'), name,
        h('button', {class: 'btn'}, 'Open')),
        h('h2', {}, 'Topics that sent dead letters since the server started'),
        this.problem, this.rows, this.pager);
  }

  async refresh() {
    try {
      const page = await api.topics({deadLetters: true, sort: 'deadLetters', offset: this.offset,
        limit: PAGE});
      // Each source's dead-letter topic, and what waits there: a few calls per page, never
      // one per topic of the server.
      const rows = await Promise.all(page.topics.map(async (t) => {
        // Another namespace's topic (seen by an admin of '*'): shown, not asked about.
        if (t.namespace) return {t, dlq: null, info: null};
        const cfg = await api.topicConfig(t.topic);
        const info = cfg.deadLetterTopic ? await api.topicInfo(cfg.deadLetterTopic) : null;
        return {t, dlq: cfg.deadLetterTopic, info};
      }));
      fill(this.problem);
      fill(this.rows, rows.length ? table(['Source topic', 'Dead-lettered', 'Dead-letter topic',
        'Ready there'], rows.map(({t, dlq, info}) => h('tr', {testid: 'dl-row'},
          h('th', {scope: 'row'}, t.namespace ? t.topic :
            h('a', {href: route('topic', t.topic)}, t.topic)),
          h('td', {class: 'num'}, fmtInt(t.deadLettersTotal)),
          h('td', {}, dlq ? h('a', {href: route('dlq', dlq), testid: 'dlq-open'}, dlq) :
            h('span', {class: 'muted'}, t.namespace ? `in namespace ${t.namespace}` :
              'none now')),
          h('td', {class: 'num'}, info ? fmtInt(info.readyQueueSize) : '—')))) :
        h('p', {class: 'empty'}, 'No dead letter since the server started.'));
      fill(this.pager,
          h('button', {class: 'btn', disabled: this.offset === 0, onclick: () => {
            this.offset = Math.max(0, this.offset - PAGE);
            this.refresh();
          }}, '← Previous'),
          h('span', {class: 'muted'}, `${fmtInt(page.total)} topics`),
          h('button', {class: 'btn', disabled: this.offset + PAGE >= page.total, onclick: () => {
            this.offset += PAGE;
            this.refresh();
          }}, 'Next →'));
    } catch (e) {
      fill(this.problem, errorBox(e));
    }
  }
}

export class DeadLetterTopicView {
  constructor(topic) {
    this.topic = topic;
    this.problem = h('div');
    this.stats = h('div', {class: 'stats'});
    this.browser = new MessageBrowser(topic, {deadLetters: true, onChange: () => this.refresh()});
    this.el = h('section', {testid: 'dlq-view'},
        h('nav', {class: 'crumbs'}, h('a', {href: '#/deadletters'}, 'Dead letters'), ' / '),
        h('div', {class: 'title-row'}, h('h1', {class: 'topic-name'}, topic),
            h('div', {class: 'actions'},
                h('a', {class: 'btn', href: route('topic', topic)}, 'Topic view'),
                h('button', {class: 'btn primary', testid: 'redrive-all',
                  onclick: () => this.redriveAll()}, 'Redrive all…'))),
        this.problem, this.stats, this.browser.el);
    this.browser.first();
  }

  async refresh() {
    try {
      const info = await api.topicInfo(this.topic);
      fill(this.problem);
      fill(this.stats, stat('Ready', fmtInt(info.readyQueueSize), {testid: 'dlq-ready'}),
          stat('Consuming', fmtInt(info.ackQueueSize)), stat('Waiting', fmtInt(info.waitingQueueSize)));
    } catch (e) {
      fill(this.problem, errorBox(e));
    }
  }

  async redriveAll() {
    if (!await confirmDialog({title: 'Redrive every dead letter?', confirm: 'Redrive all',
      body: h('p', {}, 'Every ready message of ', h('code', {}, this.topic), ' goes back to its ' +
          'source topic as a new message.')})) return;
    const n = await act(() => api.redriveAll(this.topic), (k) => `Redrove ${fmtInt(k)} messages.`);
    if (n !== undefined) {
      this.browser.first();
      this.refresh();
    }
  }
}
