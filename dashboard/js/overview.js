// Overview: the node's totals and charts of the last hour, and the topics a page at a time
// (search, sort, paging: never every topic at once; the server pages them). A namespace's admin
// sees its namespace's topics and their sums, without the node's charts (they span every
// namespace: the server gives them to an admin of '*' only).
import {api} from './api.js';
import {lineChart, sparkline} from './charts.js';
import {errorBox, fill, fillIfChanged, fmtDuration, fmtInt, fmtRate, h, route, stat,
  table} from './ui.js';

const PAGE = 25;

// The charts of the node's history (also used by nothing else: the topic view has its own).
export function totalCharts(hist) {
  const t = hist.total;
  return [
    lineChart({title: 'Sends and deliveries per second', times: hist.times, testid: 'chart-rates',
      lines: [{name: 'sends', values: t.sends, cls: 'sends'},
        {name: 'deliveries', values: t.deliveries, cls: 'deliveries'},
        {name: 'acks', values: t.acks, cls: 'acks'}], unit: '/s'}),
    lineChart({title: 'Messages in life', times: hist.times, testid: 'chart-depth',
      lines: [{name: 'waiting', values: t.waiting, cls: 'waiting'},
        {name: 'ready', values: t.ready, cls: 'ready'},
        {name: 'consuming', values: t.consuming, cls: 'consuming'}]}),
    lineChart({title: 'Trigger lateness p99 (ms)', times: hist.times, testid: 'chart-lateness',
      lines: [{name: 'p99', values: t.latenessP99Millis, cls: 'lateness'}], unit: ' ms'}),
    lineChart({title: 'Dead letters per second', times: hist.times, testid: 'chart-dead',
      lines: [{name: 'dead letters', values: t.deadLetters, cls: 'dead'}], unit: '/s'}),
  ];
}

function last(values) {
  for (let i = values.length - 1; i >= 0; --i) if (values[i] !== null) return values[i];
  return null;
}

export class OverviewView {
  constructor() {
    this.q = '';
    this.sort = 'topic';
    this.offset = 0;
    this.stats = h('div', {class: 'stats'});
    this.charts = h('div', {class: 'charts'});
    this.rows = h('div', {class: 'table-wrap'});
    this.prev = h('button', {class: 'btn', disabled: true, onclick: () => {
      this.offset = Math.max(0, this.offset - PAGE);
      this.refresh();
    }}, '← Previous');
    this.range = h('span', {class: 'muted', testid: 'topic-range'});
    this.next = h('button', {class: 'btn', disabled: true, onclick: () => {
      this.offset += PAGE;
      this.refresh();
    }}, 'Next →');
    this.pager = h('div', {class: 'pager'}, this.prev, this.range, this.next);
    this.problem = h('div');
    const search = h('input', {type: 'search', placeholder: 'Search topics', 'aria-label':
      'Search topics', testid: 'topic-search', autocomplete: 'off', spellcheck: 'false'});
    let timer;
    search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.q = search.value;
        this.offset = 0;
        this.refresh();
      }, 250);
    });
    const sortBox = h('select', {'aria-label': 'Sort topics by', testid: 'topic-sort',
      onchange: (e) => {
        this.sort = e.target.value;
        this.offset = 0;
        this.refresh();
      }}, [['topic', 'Name'], ['waiting', 'Most waiting'], ['ready', 'Most ready'],
      ['consuming', 'Most consuming'], ['sends', 'Most sends/s'], ['deliveries',
        'Most deliveries/s'], ['deadLetters', 'Most dead letters']].map(([v, l]) =>
      h('option', {value: v}, l)));
    this.el = h('section', {testid: 'overview'},
        h('h1', {}, 'Overview'), this.problem, this.stats, this.charts,
        h('div', {class: 'section-head'}, h('h2', {}, 'Topics'),
            h('div', {class: 'tools'}, search, sortBox)),
        this.rows, this.pager);
  }

  async refresh() {
    try {
      const [page, hist] = await Promise.all([
        api.topics({q: this.q, offset: this.offset, limit: PAGE, sort: this.sort}),
        api.history(),
      ]);
      fill(this.problem);
      this.render(page, hist);
    } catch (e) {
      fill(this.problem, errorBox(e));
    }
  }

  render(page, hist) {
    const t = hist.total;
    fill(this.stats,
        stat('Topics', fmtInt(page.topicCount), {testid: 'stat-topics'}),
        stat('Waiting', fmtInt(page.sum.waiting), {testid: 'stat-waiting'}),
        stat('Ready', fmtInt(page.sum.ready), {testid: 'stat-ready'}),
        stat('Consuming', fmtInt(page.sum.consuming), {testid: 'stat-consuming'}),
        t ? [stat('Sends', fmtRate(last(t.sends))),
          stat('Deliveries', fmtRate(last(t.deliveries))),
          stat('Lateness p99', fmtDuration(last(t.latenessP99Millis)))] : null);
    fill(this.charts, t ? totalCharts(hist) : null);
    fillIfChanged(this.rows, [page.topics, this.q], () => this.table(page));
    this.pages(page);
  }

  table(page) {
    // Another namespace's topic (an admin of '*' sees every one) is shown, not opened: this
    // token's calls address its own namespace.
    const other = (r) => `A topic of namespace ${r.namespace}: open it with an admin token of ` +
        `that namespace`;
    const rows = page.topics.map((r) => h('tr', {testid: 'topic-row', dataset: {topic: r.topic}},
        h('th', {scope: 'row'}, r.namespace ? h('span', {class: 'topic-link muted',
          title: other(r)}, r.topic) : h('a', {href: route('topic', r.topic),
          class: 'topic-link'}, r.topic)),
        h('td', {class: 'num'}, fmtInt(r.waiting)),
        h('td', {class: 'num'}, fmtInt(r.ready)),
        h('td', {class: 'num'}, fmtInt(r.consuming)),
        h('td', {class: 'num'}, fmtRate(r.sends)),
        h('td', {class: 'num'}, fmtRate(r.deliveries)),
        h('td', {class: 'num'}, r.deadLettersTotal && !r.namespace ?
          h('a', {href: route('topic', r.topic)}, fmtInt(r.deadLettersTotal)) :
          fmtInt(r.deadLettersTotal)),
        h('td', {}, r.activity ? sparkline(r.activity) : h('span', {class: 'muted',
          title: 'History is kept for the busiest topics and those you open'}, '—'))));
    return page.topics.length ? table(['Topic', 'Waiting', 'Ready', 'Consuming',
      'Sends', 'Deliveries', 'Dead letters', 'Last hour'], rows, {testid: 'topic-table'}) :
      h('p', {class: 'empty'}, this.q ? 'No topic matches.' : 'No topic yet: send a message.');
  }

  pages(page) {
    const from = page.total ? page.offset + 1 : 0;
    const to = page.offset + page.topics.length;
    // The buttons stay (and keep the keyboard focus); only their state changes.
    this.prev.disabled = page.offset === 0;
    this.next.disabled = to >= page.total;
    this.range.textContent = `${fmtInt(from)}–${fmtInt(to)} of ${fmtInt(page.total)}`;
  }
}
