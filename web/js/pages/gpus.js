// The GPUs page: the catalog as a sortable, filtered table, a chart of price against speed, and up
// to three GPUs side by side.
import {api} from '../api.js';
import {PALETTE, axisTitle, chart, findChart} from '../charts.js';
import {h, table, title} from '../dom.js';
import {money} from '../format.js';

// The five GPUs most often compared for deep learning (V100 and A100 in each of their variants):
// a reference point among the forty, marked in the table and named on the chart.
const COMMON_PICKS = 'RTX 4090, RTX 3090, RTX A6000, V100, A100';
const isCommonPick = (name) => /^(RTX 4090|RTX 3090|RTX A6000|V100 .*|A100 .*)$/.test(name);
const gpuState = {
  text: '',
  minVram: '',
  maxPrice: '',
  sort: {index: 4, descending: false},
  compare: [],
  against: 'bf16_tflops',
};
const GPU_AXES = {
  bf16_tflops: 'BF16 TFLOPS (dense tensor)',
  bandwidth_gbs: 'Memory bandwidth GB/s',
};

const overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

// Names the common picks beside their bubbles. Their variants sit close together (four A100s), so
// each name takes the first place around its bubble (right, left, above, below) that is inside the
// chart and clear of the names already drawn; a name with no such place is left to the tooltip.
// The boxes drawn are kept on the chart ($names), which the console test reads.
const gpuNames = {
  id: 'gpu-names',
  afterDatasetsDraw: (drawn) => {
    const context = drawn.ctx;
    const area = drawn.chartArea;
    const placed = [];
    context.save();
    context.font = '12px system-ui, sans-serif';
    context.fillStyle = '#1b1f24';
    drawn.getDatasetMeta(0).data.forEach((element, index) => {
      const name = drawn.data.datasets[0].data[index].gpu.name;
      const w = context.measureText(name).width,
        lineHeight = 14,
        r = (element.options.radius || 5) + 3;
      const spots = [
        {x: element.x + r, y: element.y - lineHeight / 2},
        {x: element.x - r - w, y: element.y - lineHeight / 2},
        {x: element.x - w / 2, y: element.y - r - lineHeight},
        {x: element.x - w / 2, y: element.y + r},
      ];
      const box = spots
        .map((spot) => ({...spot, w, h: lineHeight}))
        .find(
          (b) =>
            b.x >= area.left &&
            b.x + b.w <= area.right &&
            b.y >= area.top &&
            b.y + b.h <= area.bottom &&
            !placed.some((other) => overlaps(b, other)),
        );
      if (!box) return;
      placed.push({...box, name});
      context.fillText(name, box.x, box.y + lineHeight - 3);
    });
    context.restore();
    drawn.$names = placed;
  },
};

// Price per hour against speed, bubble area = VRAM: the cheap-and-fast corner is bottom right. The
// common picks are their own colour and named on the chart.
function gpuBubbles(rows, against) {
  const unit = against === 'bf16_tflops' ? 'TFLOPS' : 'GB/s';
  const point = (g) => ({
    x: g[against],
    y: g.price_per_hour_micros / 1e6,
    r: 2 + 1.6 * Math.sqrt(g.memory_gb),
    gpu: g,
    unit,
  });
  const dataset = (label, color, list) => ({
    label,
    data: list.map(point),
    backgroundColor: color + '99',
    borderColor: color,
  });
  return {
    type: 'bubble',
    data: {
      datasets: [
        dataset(
          `Common picks (${COMMON_PICKS})`,
          PALETTE.highlight,
          rows.filter((g) => isCommonPick(g.name)),
        ),
        dataset(
          'Other GPUs',
          PALETTE.other,
          rows.filter((g) => !isCommonPick(g.name)),
        ),
      ],
    },
    options: {
      scales: {
        x: {type: 'logarithmic', title: axisTitle(GPU_AXES[against] + ' (log scale)')},
        y: {type: 'logarithmic', title: axisTitle('$ per GPU-hour here (log scale)')},
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (item) => {
              const g = item.raw.gpu;
              const price = money(g.price_per_hour_micros);
              return `${g.name}: ${item.raw.x} ${item.raw.unit}, ${price}/h, ${g.memory_gb} GB`;
            },
          },
        },
      },
    },
    plugins: [gpuNames],
  };
}

export async function gpus() {
  const {gpus: all} = await api('GET', '/v1/gpus');
  const out = h('div');
  const columns = [
    {
      title: 'GPU',
      key: (g) => g.name,
      cell: (g) =>
        h(
          'span',
          {},
          g.name,
          isCommonPick(g.name)
            ? h(
                'span',
                {
                  class: 'tag',
                  title:
                    'one of the five GPUs most often compared for deep learning: ' + COMMON_PICKS,
                },
                'common pick',
              )
            : '',
        ),
    },
    {title: 'Arch', key: (g) => g.arch, cell: (g) => g.arch},
    {title: 'VRAM GB', numeric: true, key: (g) => g.memory_gb, cell: (g) => g.memory_gb},
    {title: 'BF16 TFLOPS', numeric: true, key: (g) => g.bf16_tflops, cell: (g) => g.bf16_tflops},
    {
      title: '$/h',
      numeric: true,
      key: (g) => g.price_per_hour_micros,
      cell: (g) => money(g.price_per_hour_micros),
    },
    {
      title: 'Bandwidth GB/s',
      numeric: true,
      key: (g) => g.bandwidth_gbs,
      cell: (g) => g.bandwidth_gbs,
    },
    {
      title: 'TFLOPS per $/h',
      numeric: true,
      key: (g) => g.tflops_per_dollar,
      cell: (g) => Math.round(g.tflops_per_dollar),
    },
    {
      title: 'Compare',
      key: (g) => (gpuState.compare.includes(g.name) ? 0 : 1),
      cell: (g) =>
        h('input', {
          type: 'checkbox',
          'aria-label': 'compare ' + g.name,
          checked: gpuState.compare.includes(g.name),
          onchange: (event) => {
            if (event.target.checked) gpuState.compare = [...gpuState.compare, g.name].slice(-3);
            else gpuState.compare = gpuState.compare.filter((n) => n !== g.name);
            render();
          },
        }),
    },
  ];
  const filters = h(
    'form',
    {class: 'filters', onsubmit: (e) => e.preventDefault()},
    h(
      'label',
      {},
      'Search ',
      h('input', {
        type: 'search',
        value: gpuState.text,
        oninput: (e) => {
          gpuState.text = e.target.value;
          render();
        },
      }),
    ),
    h(
      'label',
      {},
      'Min VRAM GB ',
      h('input', {
        type: 'number',
        min: 0,
        value: gpuState.minVram,
        oninput: (e) => {
          gpuState.minVram = e.target.value;
          render();
        },
      }),
    ),
    h(
      'label',
      {},
      'Max $/h ',
      h('input', {
        type: 'number',
        min: 0,
        step: '0.05',
        value: gpuState.maxPrice,
        oninput: (e) => {
          gpuState.maxPrice = e.target.value;
          render();
        },
      }),
    ),
    h(
      'label',
      {},
      'Chart price against ',
      h(
        'select',
        {
          id: 'chart-against',
          onchange: (e) => {
            gpuState.against = e.target.value;
            render();
          },
        },
        Object.entries(GPU_AXES).map(([key, text]) =>
          h('option', {value: key, selected: key === gpuState.against}, text),
        ),
      ),
    ),
  );
  const holder = h('div');
  const bubbles = chart(
    'gpu-chart',
    'Price per hour against speed; bubble area is VRAM',
    gpuBubbles([], gpuState.against),
  );
  function render() {
    const text = gpuState.text.toLowerCase();
    let rows = all.filter(
      (g) =>
        (!text ||
          [g.name, ...(g.aliases || []), g.arch, g.vendor]
            .join(' ')
            .toLowerCase()
            .includes(text)) &&
        (!gpuState.minVram || g.memory_gb >= Number(gpuState.minVram)) &&
        (!gpuState.maxPrice || g.price_per_hour_micros <= Number(gpuState.maxPrice) * 1e6),
    );
    const column = columns[gpuState.sort.index];
    rows = rows.sort((a, b) => {
      const x = column.key(a),
        y = column.key(b);
      const order = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
      return gpuState.sort.descending ? -order : order;
    });
    const shown = findChart('gpu-chart');
    if (shown) {
      const fresh = gpuBubbles(rows, gpuState.against);
      shown.data = fresh.data;
      shown.options.scales.x.title.text = fresh.options.scales.x.title.text;
      shown.update();
    }
    const chosen = gpuState.compare.map((name) => all.find((g) => g.name === name)).filter(Boolean);
    holder.replaceChildren(
      h(
        'p',
        {class: 'hint'},
        `${rows.length} of ${all.length} GPU types. Click a column to sort; tick up to three ` +
          `to compare.`,
      ),
      table(columns, rows, {
        class: 'gpus',
        sort: gpuState.sort,
        onSort: (index) => {
          gpuState.sort = {
            index,
            descending:
              gpuState.sort.index === index
                ? !gpuState.sort.descending
                : !!columns[index].numeric && index !== 4,
          };
          render();
        },
      }),
      chosen.length >= 2 ? compareTable(chosen) : '',
    );
  }
  render();
  out.append(title('GPUs'), filters, bubbles, holder);
  return out;
}

function compareTable(chosen) {
  const rows = [
    ['VRAM GB', (g) => g.memory_gb],
    ['Memory', (g) => g.memory_type],
    ['Bandwidth GB/s', (g) => g.bandwidth_gbs],
    ['FP32 TFLOPS', (g) => g.fp32_tflops],
    ['BF16 TFLOPS', (g) => g.bf16_tflops],
    ['FP8 TFLOPS', (g) => g.fp8_tflops ?? '-'],
    ['Tensor cores', (g) => g.tensor_cores],
    ['TDP W', (g) => g.tdp_w],
    ['Rent $/h', (g) => g.rent_usd_per_hour],
    ['Buy $', (g) => g.buy_usd],
  ];
  return h(
    'section',
    {'aria-label': 'comparison'},
    h('h2', {}, 'Side by side'),
    table(
      [
        {title: '', cell: (r) => r[0]},
        ...chosen.map((g) => ({title: g.name, numeric: true, cell: (r) => r[1](g)})),
      ],
      rows,
      {class: 'compare'},
    ),
  );
}
