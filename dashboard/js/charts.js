// SVG charts built with the DOM (no library): a line chart over the history's samples, a
// sparkline, and a bar chart for the delay buckets.
import {fmtClock, fmtNum, h, svg} from './ui.js';

const W = 600;
const H = 160;
const PAD = {l: 44, r: 8, t: 8, b: 20};

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

// lines: [{name, values, cls}] over `times` (ms epoch). null values leave gaps.
export function lineChart({title, times, lines, unit = '', testid}) {
  const n = times.length;
  const max = niceMax(Math.max(0, ...lines.flatMap((l) => l.values.filter((v) => v !== null))));
  const x = (i) => PAD.l + (n <= 1 ? 0 : (i * (W - PAD.l - PAD.r)) / (n - 1));
  const y = (v) => PAD.t + (H - PAD.t - PAD.b) * (1 - v / max);
  const grid = [0, 0.5, 1].map((f) => svg('g', {},
      svg('line', {x1: PAD.l, x2: W - PAD.r, y1: y(max * f), y2: y(max * f), class: 'gridline'}),
      svg('text', {x: PAD.l - 6, y: y(max * f) + 4, class: 'axis', 'text-anchor': 'end'},
          fmtNum(max * f))));
  const paths = lines.map((l) => {
    let d = '';
    let pen = false;
    l.values.forEach((v, i) => {
      if (v === null || v === undefined) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    // A lone point would not show as a path: a dot instead.
    return d ? svg('path', {d, class: `line ${l.cls}`}) : null;
  });
  const labels = n ? [
    svg('text', {x: PAD.l, y: H - 4, class: 'axis'}, fmtClock(times[0])),
    svg('text', {x: W - PAD.r, y: H - 4, class: 'axis', 'text-anchor': 'end'}, fmtClock(times[n - 1])),
  ] : [];
  const cursor = svg('line', {y1: PAD.t, y2: H - PAD.b, class: 'cursor', visibility: 'hidden'});
  const chart = svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
    'aria-label': title}, grid, paths, labels, cursor);
  const last = (l) => {
    for (let i = l.values.length - 1; i >= 0; --i) if (l.values[i] !== null) return l.values[i];
    return null;
  };
  const readout = h('div', {class: 'readout'});
  const showValues = (i) => {
    const parts = lines.map((l) => {
      const v = i === null ? last(l) : l.values[i];
      return h('span', {class: `key ${l.cls}`}, `${l.name} ${fmtNum(v)}${v === null ? '' : unit}`);
    });
    readout.replaceChildren(i === null ? 'now' : fmtClock(times[i]), ...parts);
  };
  showValues(null);
  chart.addEventListener('mousemove', (ev) => {
    if (n === 0) return;
    const box = chart.getBoundingClientRect();
    const px = ((ev.clientX - box.left) / box.width) * W;
    const i = Math.max(0, Math.min(n - 1, Math.round(((px - PAD.l) / (W - PAD.l - PAD.r)) * (n - 1))));
    cursor.setAttribute('x1', x(i));
    cursor.setAttribute('x2', x(i));
    cursor.setAttribute('visibility', 'visible');
    showValues(i);
  });
  chart.addEventListener('mouseleave', () => {
    cursor.setAttribute('visibility', 'hidden');
    showValues(null);
  });
  return h('figure', {class: 'card chart-card', testid}, h('figcaption', {}, title),
      n ? chart : h('div', {class: 'empty'}, 'No samples yet: one comes every few seconds.'),
      readout);
}

// values: numbers or null; a tiny trend line.
export function sparkline(values) {
  const w = 120;
  const hgt = 24;
  const known = values.filter((v) => v !== null);
  if (!values.length || !known.length) return h('span', {class: 'muted'}, '—');
  const max = Math.max(...known) || 1;
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null) {
      pen = false;
      return;
    }
    const px = values.length === 1 ? w : (i * w) / (values.length - 1);
    d += `${pen ? 'L' : 'M'}${px.toFixed(1)},${(hgt - 2 - (v / max) * (hgt - 4)).toFixed(1)}`;
    pen = true;
  });
  return svg('svg', {viewBox: `0 0 ${w} ${hgt}`, class: 'spark', 'aria-hidden': 'true'},
      svg('path', {d, class: 'line sends'}));
}

// Horizontal bars: [{label, value}].
export function barChart(items) {
  const max = Math.max(1, ...items.map((i) => i.value));
  return h('div', {class: 'bars'}, items.map((i) => {
    const bar = h('div', {class: 'bar'});
    bar.style.width = `${(100 * i.value) / max}%`;  // CSSOM: allowed by the page's policy
    return h('div', {class: 'bar-row'}, h('span', {class: 'bar-label'}, i.label),
        h('span', {class: 'bar-track'}, bar), h('span', {class: 'bar-value num'}, fmtNum(i.value)));
  }));
}
