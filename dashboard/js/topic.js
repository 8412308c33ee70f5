// Topic view: counts, the nine delay buckets, the topic's charts, its configuration (with the
// layer each value comes from, and an edit form), pause/resume/purge, the message browser and a
// search by msgId.
import {api} from './api.js';
import {MessageBrowser} from './browser.js';
import {barChart, lineChart} from './charts.js';
import {act, confirmDialog, errorBox, field, fill, fillIfChanged, fmtDuration, fmtInt, h, route,
  stat, table} from './ui.js';

const BUCKETS = [
  ['sizeOf0To1min', '< 1 min'], ['sizeOf1minTo10min', '1–10 min'],
  ['sizeOf10minTo30min', '10–30 min'], ['sizeOf30minTo1hour', '30 min–1 h'],
  ['sizeOf1hourTo6hour', '1–6 h'], ['sizeOf6hourTo1day', '6 h–1 day'],
  ['sizeOf1dayTo7day', '1–7 days'], ['sizeOf7dayTo30day', '7–30 days'],
  ['sizeOf30dayToInfinite', '≥ 30 days'],
];

// name, label, kind ('count', 'ms', 'topic', 'bool', 'json'), hint.
const CONFIG = [
  ['capacity', 'Capacity', 'count', 'Most messages in life; 0 is unlimited.'],
  ['ttlMillis', 'TTL (ms)', 'ms', 'Default life after the trigger time.'],
  ['maxRetry', 'Max retry', 'count', 'Default: at most maxRetry + 1 deliveries.'],
  ['ackTimeoutMillis', 'Ack timeout (ms)', 'ms', 'Default time a consumer has to ack.'],
  ['retryIntervalMillis', 'Retry interval (ms)', 'ms', 'Wait before a nacked or timed-out message is ready again.'],
  ['deadLetterTopic', 'Dead-letter topic', 'topic', 'Where expired and exhausted messages go; empty: none.'],
  ['paused', 'Paused', 'bool', 'Sends are stored; pulls get nothing.'],
  ['callback', 'Push callback', 'json',
    'Where chronoq pushes this topic\'s messages (a JSON object, see docs/push.md); empty: none.'],
  ['history', 'History', 'bool', 'Record every transition of each message (shown in its view).'],
];

// A callback as the text of its edit box ('' when none).
const jsonText = (v) => (v ? JSON.stringify(v) : '');

export class TopicView {
  constructor(topic) {
    this.topic = topic;
    this.problem = h('div');
    this.title = h('div', {class: 'title-row'});
    this.stats = h('div', {class: 'stats'});
    this.buckets = h('figure', {class: 'card', testid: 'buckets'});
    this.charts = h('div', {class: 'charts'});
    this.config = h('div', {class: 'card', testid: 'topic-config'});
    this.browser = new MessageBrowser(topic);
    const id = h('input', {name: 'msgId', required: true, placeholder: 'msgId', autocomplete: 'off',
      spellcheck: 'false', testid: 'find-msgid'});
    const find = h('form', {class: 'inline-form', testid: 'find-form', onsubmit: (e) => {
      e.preventDefault();
      location.hash = route('topic', this.topic, 'msg', id.value);
    }}, h('label', {for: 'find-msg'}, 'Find a message'), id, h('button', {class: 'btn'}, 'Open'));
    id.id = 'find-msg';
    this.el = h('section', {testid: 'topic-view'},
        h('nav', {class: 'crumbs'}, h('a', {href: '#/'}, 'Overview'), ' / '),
        this.title, this.problem, this.stats,
        h('div', {class: 'two'}, this.buckets, this.config), this.charts,
        h('div', {class: 'section-head'}, h('h2', {}, 'Messages'), find), this.browser.el);
    this.browser.first();
  }

  async refresh() {
    try {
      const [info, cfg, hist] = await Promise.all([api.topicInfo(this.topic),
        api.topicConfig(this.topic), api.history(this.topic)]);
      let dlq = null;
      if (cfg.deadLetterTopic) dlq = await api.topicInfo(cfg.deadLetterTopic);
      fill(this.problem);
      this.render(info, cfg, hist, dlq);
    } catch (e) {
      fill(this.problem, errorBox(e));
    }
  }

  render(info, cfg, hist, dlq) {
    const t = this.topic;
    fillIfChanged(this.title, String(cfg.paused), () => [
        h('h1', {class: 'topic-name', testid: 'topic-name'}, t),
        cfg.paused ? h('span', {class: 'badge paused', testid: 'paused'}, 'PAUSED') : null,
        h('div', {class: 'actions'},
            cfg.paused ?
              h('button', {class: 'btn', testid: 'resume', onclick: () => this.run(
                  () => api.resumeTopic(t), 'Resumed.')}, 'Resume') :
              h('button', {class: 'btn', testid: 'pause', onclick: () => this.run(
                  () => api.pauseTopic(t), 'Paused: pulls get nothing until resumed.')}, 'Pause'),
            h('button', {class: 'btn danger', testid: 'purge', onclick: () => this.purge()},
                'Purge…'))]);
    fill(this.stats,
        stat('Waiting', fmtInt(info.waitingQueueSize), {testid: 'count-waiting'}),
        stat('Ready', fmtInt(info.readyQueueSize), {testid: 'count-ready'}),
        stat('Consuming', fmtInt(info.ackQueueSize), {testid: 'count-consuming'}),
        dlq ? stat('Dead letters', h('a', {href: route('dlq', cfg.deadLetterTopic),
          testid: 'dlq-link'}, fmtInt(dlq.readyQueueSize + dlq.waitingQueueSize +
            dlq.ackQueueSize)), {title: `in ${cfg.deadLetterTopic}`}) : null);
    fill(this.buckets, h('figcaption', {}, 'Waiting, by time until trigger'),
        barChart(BUCKETS.map(([k, label]) => ({label, value: info.waitingQueueInfo[k] || 0}))));
    const s = hist.series;
    fill(this.charts, s ? [
      lineChart({title: 'Sends and deliveries per second', times: hist.times, unit: '/s',
        lines: [{name: 'sends', values: s.sends, cls: 'sends'},
          {name: 'deliveries', values: s.deliveries, cls: 'deliveries'}]}),
      lineChart({title: 'Messages in life', times: hist.times, lines: [
        {name: 'waiting', values: s.waiting, cls: 'waiting'},
        {name: 'ready', values: s.ready, cls: 'ready'},
        {name: 'consuming', values: s.consuming, cls: 'consuming'}]}),
    ] : h('p', {class: 'muted'}, 'This topic\'s history starts now: the server keeps it for ' +
        'the busiest topics and for those open here.'));
    if (!this.editing) this.renderConfig(cfg);
  }

  renderConfig(cfg) {
    const show = (name, kind) => {
      const v = cfg[name];
      if (kind === 'bool') return v ? 'yes' : 'no';
      if (kind === 'topic') return v ? h('a', {href: route('topic', v)}, v) : 'none';
      if (kind === 'json') return v ? h('code', {class: 'json'}, jsonText(v)) : 'none';
      if (kind === 'ms') return v >= 1000 ? `${fmtInt(v)} ms (${fmtDuration(v)})` : `${fmtInt(v)} ms`;
      return name === 'capacity' && v === 0 ? 'unlimited' : fmtInt(v);
    };
    fill(this.config, h('div', {class: 'section-head'}, h('h2', {}, 'Configuration'),
        h('div', {class: 'actions'},
            h('button', {class: 'btn', testid: 'edit-config', onclick: () => this.editConfig(cfg)},
                'Edit'),
            h('button', {class: 'btn', onclick: () => this.resetConfig()}, 'Reset…'))),
    table(['Setting', 'Value', 'From'], CONFIG.map(([name, label, kind]) => h('tr', {},
        h('th', {scope: 'row'}, label), h('td', {testid: `cfg-${name}`}, show(name, kind)),
        h('td', {class: 'muted'}, cfg.sources[name] || '')))));
  }

  editConfig(cfg) {
    this.editing = true;
    const inputs = {};
    const fields = CONFIG.map(([name, label, kind, hint]) => {
      const input = kind === 'bool' ? h('input', {type: 'checkbox', name, checked: cfg[name]}) :
        kind === 'topic' ? h('input', {name, value: cfg[name], autocomplete: 'off', spellcheck: 'false'}) :
        kind === 'json' ? h('textarea', {name, rows: 3, spellcheck: 'false', value: jsonText(cfg[name])}) :
          h('input', {name, type: 'number', min: 0, step: 1, value: cfg[name], required: true});
      inputs[name] = input;
      return field(label, input, hint);
    });
    const form = h('form', {class: 'config-form', testid: 'config-form', onsubmit: async (e) => {
      e.preventDefault();
      // Only what changed is sent: the other values stay in the layer they come from.
      const changed = {};
      for (const [name, , kind] of CONFIG) {
        if (kind === 'json') {  // sent as its JSON text; '' removes it; the server checks it
          const text = inputs[name].value.trim();
          if (text !== jsonText(cfg[name])) changed[name] = text;
          continue;
        }
        const v = kind === 'bool' ? inputs[name].checked : kind === 'topic' ?
          inputs[name].value : Number(inputs[name].value);
        if (v !== cfg[name]) changed[name] = v;
      }
      if (!Object.keys(changed).length) {
        this.editing = false;
        this.renderConfig(cfg);
        return;
      }
      const saved = await act(() => api.setTopicConfig(this.topic, changed), 'Configuration saved.');
      if (saved) {
        this.editing = false;
        this.refresh();
      }
    }}, h('div', {class: 'form-grid'}, fields),
    h('div', {class: 'dialog-actions'},
        h('button', {type: 'button', class: 'btn', onclick: () => {
          this.editing = false;
          this.renderConfig(cfg);
        }}, 'Cancel'),
        h('button', {type: 'submit', class: 'btn primary', testid: 'save-config'}, 'Save')));
    fill(this.config, h('h2', {}, 'Edit configuration'), form);
    inputs.capacity.focus();
  }

  async resetConfig() {
    if (!await confirmDialog({title: 'Reset the configuration?', body: h('p', {},
        'The stored settings of ', h('code', {}, this.topic), ' are forgotten: the config file\'s ' +
        'and the server\'s values apply again, and a paused topic resumes.'),
    confirm: 'Reset', danger: true})) return;
    this.run(() => api.deleteTopicConfig(this.topic), 'Configuration reset.');
  }

  async purge() {
    if (!await confirmDialog({title: 'Purge this topic?', body: h('p', {},
        'Every message in life of ', h('code', {}, this.topic), ' (waiting, ready, consuming) is ' +
        'deleted. This cannot be undone.'), confirm: 'Purge', danger: true})) return;
    this.run(() => api.purgeTopic(this.topic), (n) => `Purged ${fmtInt(n)} messages.`);
  }

  async run(fn, success) {
    if (await act(fn, success) !== undefined) {
      await this.refresh();
      this.browser.load();
    }
  }
}
