// Charts: Chart.js, vendored by the setup command and served by suanli as window.Chart.
import {h} from './dom.js';

export const PALETTE = {
  accent: '#0b5cad',
  highlight: '#c2410c',
  other: '#6b7785',
  storage: '#1b6e3a',
};
let charts = []; // the shown view's charts, destroyed when it changes (they watch their size)

export function destroyCharts() {
  for (const shown of charts) shown.destroy();
  charts = [];
}

// The shown chart inside the figure of `id`, if any.
export function findChart(id) {
  return charts.find((c) => c.canvas.closest('#' + id));
}

// A canvas drawing `config`, described for screen readers by `label` (the tables beside each chart
// hold the same numbers). Without the chart library the page keeps its tables and says why.
export function chart(id, label, config, height) {
  if (!window.Chart) {
    return h(
      'p',
      {class: 'hint'},
      'No chart: this server was built without its chart library ',
      '(run scripts/install-deps.sh, then build suanli again).',
    );
  }
  const canvas = h('canvas', {role: 'img', 'aria-label': label});
  const made = new window.Chart(canvas, {
    ...config,
    options: {animation: false, maintainAspectRatio: false, ...config.options},
  });
  charts.push(made);
  const box = h('div', {class: 'chart-box'}, canvas);
  // Set through the CSSOM, which the console's CSP allows (style attributes it does not).
  if (height) box.style.height = `${height}px`;
  return h('figure', {class: 'chart', id}, box, h('figcaption', {class: 'hint'}, label));
}

export const axisTitle = (text) => ({display: true, text});
