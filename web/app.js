// The suanli console: a client of the public /v1 API and nothing else, so anything done here can be
// done with the CLI or a script. Plain ES modules, no build step. Text from the server is only ever
// set as textContent (never parsed as HTML). The API token lives in localStorage, is sent only in
// the Authorization header, and never appears in a URL.

const TOKEN_KEY = 'suanli.token';
const ROLE_KEY = 'suanli.role';
const PROJECT_KEY = 'suanli.project';  // the project the pods list and Deploy work in; '' for your own  // shows the Admin page's link; the server decides what an admin may do
const view = document.getElementById('view');

// --- Small helpers --------------------------------------------------------------------------------

// h('a', {href: '#/x', class: 'y'}, 'text', child...): an element; strings become text nodes.
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function money(micros) {
  if (micros === undefined || micros === null) return '-';
  // Cents, as people read money ($19.92, $1,250.00); the exact figure is in exactMoney. An amount
  // under a cent (storage per hour, a few seconds of GPU) keeps two significant digits ($0.00038)
  // rather than reading as nothing.
  const dollars = Math.abs(micros) / 1e6;
  const text = dollars >= 0.01 || dollars === 0
    ? dollars.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2})
    : String(Number(dollars.toPrecision(2)));
  return (micros < 0 ? '-$' : '$') + text;
}

// Every micro-dollar (billing is by the second): for a tooltip beside money()'s rounded figure.
function exactMoney(micros) {
  return (micros < 0 ? '-$' : '$') + (Math.abs(micros) / 1e6).toFixed(6);
}

const moneyCell = (micros) => h('span', {title: exactMoney(micros)}, money(micros));

// A pod's GPUs: "2", or its share of one ("0.5"; servers before shares send no gpu_milli).
function podGpus(pod) {
  return pod.gpu_milli && pod.gpu_milli < 1000 ? String(pod.gpu_milli / 1000) : String(pod.gpu_count);
}

function duration(seconds) {
  if (!seconds || seconds < 0) return '0s';
  const d = Math.floor(seconds / 86400), hh = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60), s = Math.floor(seconds % 60);
  if (d) return `${d}d${String(hh).padStart(2, '0')}h`;
  if (hh) return `${hh}h${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

// A long time as people say it: "5d03h" is fine, "2996d02h" is not ("about 8.2 years").
function roughDuration(seconds) {
  const days = seconds / 86400;
  if (days < 7) return duration(seconds);
  if (days < 90) return `about ${Math.round(days)} days`;
  if (days < 730) return `about ${Math.round(days / 30.44)} months`;
  return `about ${(days / 365.25).toFixed(1)} years`;
}

// GPU time in a usage table: "4m10s" for a short run (not "0.00" hours), hours beyond one.
function gpuTime(seconds) {
  return seconds < 3600 ? duration(seconds) : `${(seconds / 3600).toFixed(1)} h`;
}

function bytes(n) {
  return n >= 2 ** 30 ? (n / 2 ** 30).toFixed(1) + ' GiB' : Math.floor(n / 2 ** 20) + ' MiB';
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function token() { return localStorage.getItem(TOKEN_KEY) || ''; }

// One API call; the parsed JSON answer (or text for text/plain), or an ApiError with the server's
// own message. A 401 with the saved token signs out: it is wrong or was revoked. `candidate` is a
// token to try instead of the saved one (signing in).
async function api(method, path, body, candidate) {
  const headers = {};
  const bearer = candidate ?? token();
  if (bearer) headers.Authorization = 'Bearer ' + bearer;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  } catch (e) {
    throw new ApiError(0, 'UNAVAILABLE', 'the suanli server does not answer; is it running?');
  }
  const type = response.headers.get('content-type') || '';
  const payload = type.includes('json') ? await response.json().catch(() => null) : await response.text();
  if (response.ok) return payload;
  const error = payload && payload.error ? payload.error : {code: 'HTTP_' + response.status, message: String(payload)};
  if (response.status === 401 && candidate === undefined && token()) signOut(error.message);
  throw new ApiError(response.status, error.code, error.message);
}

// A list the server pages ({pods: [...], next_after: ID}), every page of it, as one {[key]: [...]}.
async function everyPage(path, key) {
  const all = [];
  let next = path;
  for (;;) {
    const page = await api('GET', next);
    all.push(...page[key]);
    if (!page.next_after) return {[key]: all};
    next = path + (path.includes('?') ? '&' : '?') + 'after=' + encodeURIComponent(page.next_after);
  }
}

function errorBox(error) {
  return h('p', {class: 'error', role: 'alert'}, error.message || String(error));
}

// Renders `build()` now (or after `wait` ms) and again every `ms` while the view is shown. A view
// built after its user has already moved on (its API calls were slow) polls nothing: the view
// generation has changed.
let viewGeneration = 0;  // route() counts the views shown
function poll(ms, build, wait = 0) {
  const generation = viewGeneration;
  const run = async () => {
    if (generation !== viewGeneration) return;
    await build();
    if (generation === viewGeneration) setTimeout(run, ms);
  };
  if (wait) setTimeout(run, wait);
  else run();
}

function table(columns, rows, options = {}) {
  const head = h('tr', {}, columns.map((column, index) => {
    const sorted = options.sort && options.sort.index === index;
    return h('th', {scope: 'col', class: column.numeric ? 'num' : undefined, 'aria-sort': sorted ? (options.sort.descending ? 'descending' : 'ascending') : undefined},
      options.onSort ? h('button', {type: 'button', class: 'sort', onclick: () => options.onSort(index)}, column.title) : column.title);
  }));
  const body = rows.map((row) => h('tr', {}, columns.map((column) =>
    h('td', {class: column.numeric ? 'num' : undefined}, column.cell(row)))));
  return h('table', {class: options.class}, h('thead', {}, head), h('tbody', {}, body));
}

function title(text, ...more) {
  document.title = `${text} · suanli`;
  return h('h1', {}, text, ...more);
}

// --- Charts (Chart.js, vendored by the setup command and served by suanli as window.Chart) ---------

const PALETTE = {accent: '#0b5cad', highlight: '#c2410c', other: '#6b7785', storage: '#1b6e3a'};
let charts = [];  // the shown view's charts, destroyed when it changes (they watch their size)

function destroyCharts() {
  for (const shown of charts) shown.destroy();
  charts = [];
}

// A canvas drawing `config`, described for screen readers by `label` (the tables beside each chart
// hold the same numbers). Without the chart library the page keeps its tables and says why.
function chart(id, label, config, height) {
  if (!window.Chart) {
    return h('p', {class: 'hint'}, 'No chart: this server was built without its chart library ',
      '(run scripts/install-deps.sh, then build suanli again).');
  }
  const canvas = h('canvas', {role: 'img', 'aria-label': label});
  const made = new window.Chart(canvas, {...config, options: {animation: false, maintainAspectRatio: false, ...config.options}});
  charts.push(made);
  const box = h('div', {class: 'chart-box'}, canvas);
  if (height) box.style.height = `${height}px`;  // CSSOM, which the console's CSP allows (style attributes it does not)
  return h('figure', {class: 'chart', id}, box, h('figcaption', {class: 'hint'}, label));
}

const axisTitle = (text) => ({display: true, text});

// --- Sign-in --------------------------------------------------------------------------------------

function signOut(reason) {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(ROLE_KEY);
  localStorage.removeItem(PROJECT_KEY);
  sessionStorage.setItem('suanli.signed-out', reason || 'Signed out.');
  location.hash = '#/sign-in';
  route();
}

function signIn() {
  const input = h('input', {id: 'token', type: 'password', autocomplete: 'current-password', required: true,
                            placeholder: 'sl_...', 'aria-describedby': 'token-help'});
  const status = h('p', {role: 'status'}, sessionStorage.getItem('suanli.signed-out') || '');
  sessionStorage.removeItem('suanli.signed-out');
  const form = h('form', {class: 'card narrow', onsubmit: async (event) => {
    event.preventDefault();
    try {
      const me = await api('GET', '/v1/users/me', undefined, input.value.trim());
      localStorage.setItem(TOKEN_KEY, input.value.trim());
      localStorage.setItem(ROLE_KEY, me.role);
      location.hash = '#/gpus';
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  }},
  h('label', {for: 'token'}, 'API token'), input,
  h('p', {id: 'token-help', class: 'hint'}, 'An admin creates your user and first token (suanli users create NAME); ',
    'make more with suanli tokens create. The token stays in this browser only.'),
  h('button', {type: 'submit'}, 'Sign in'), status);
  return [title('Sign in'), form];
}

// --- GPUs -----------------------------------------------------------------------------------------

// The five GPUs most often compared for deep learning (V100 and A100 in each of their variants):
// a reference point among the forty, marked in the table and named on the chart.
const COMMON_PICKS = 'RTX 4090, RTX 3090, RTX A6000, V100, A100';
const isCommonPick = (name) => /^(RTX 4090|RTX 3090|RTX A6000|V100 .*|A100 .*)$/.test(name);
const gpuState = {text: '', minVram: '', maxPrice: '', sort: {index: 4, descending: false}, compare: [], against: 'bf16_tflops'};
const GPU_AXES = {bf16_tflops: 'BF16 TFLOPS (dense tensor)', bandwidth_gbs: 'Memory bandwidth GB/s'};

const overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

// Names the common picks beside their bubbles. Their variants sit close together (four A100s), so
// each name takes the first place around its bubble (right, left, above, below) that is inside the
// chart and clear of the names already drawn; a name with no such place is left to the tooltip.
// The boxes drawn are kept on the chart ($names), which the console test reads.
const gpuNames = {id: 'gpu-names', afterDatasetsDraw: (drawn) => {
  const context = drawn.ctx;
  const area = drawn.chartArea;
  const placed = [];
  context.save();
  context.font = '12px system-ui, sans-serif';
  context.fillStyle = '#1b1f24';
  drawn.getDatasetMeta(0).data.forEach((element, index) => {
    const name = drawn.data.datasets[0].data[index].gpu.name;
    const w = context.measureText(name).width, lineHeight = 14, r = (element.options.radius || 5) + 3;
    const spots = [{x: element.x + r, y: element.y - lineHeight / 2}, {x: element.x - r - w, y: element.y - lineHeight / 2},
      {x: element.x - w / 2, y: element.y - r - lineHeight}, {x: element.x - w / 2, y: element.y + r}];
    const box = spots.map((spot) => ({...spot, w, h: lineHeight})).find((b) => b.x >= area.left && b.x + b.w <= area.right &&
      b.y >= area.top && b.y + b.h <= area.bottom && !placed.some((other) => overlaps(b, other)));
    if (!box) return;
    placed.push({...box, name});
    context.fillText(name, box.x, box.y + lineHeight - 3);
  });
  context.restore();
  drawn.$names = placed;
}};

// Price per hour against speed, bubble area = VRAM: the cheap-and-fast corner is bottom right. The
// common picks are their own colour and named on the chart.
function gpuBubbles(rows, against) {
  const unit = against === 'bf16_tflops' ? 'TFLOPS' : 'GB/s';
  const point = (g) => ({x: g[against], y: g.price_per_hour_micros / 1e6, r: 2 + 1.6 * Math.sqrt(g.memory_gb), gpu: g, unit});
  const dataset = (label, color, list) => ({label, data: list.map(point), backgroundColor: color + '99', borderColor: color});
  return {
    type: 'bubble',
    data: {datasets: [
      dataset(`Common picks (${COMMON_PICKS})`, PALETTE.highlight, rows.filter((g) => isCommonPick(g.name))),
      dataset('Other GPUs', PALETTE.other, rows.filter((g) => !isCommonPick(g.name)))]},
    options: {
      scales: {x: {type: 'logarithmic', title: axisTitle(GPU_AXES[against] + ' (log scale)')},
               y: {type: 'logarithmic', title: axisTitle('$ per GPU-hour here (log scale)')}},
      plugins: {tooltip: {callbacks: {label: (item) => {
        const g = item.raw.gpu;
        return `${g.name}: ${item.raw.x} ${item.raw.unit}, ${money(g.price_per_hour_micros)}/h, ${g.memory_gb} GB`;
      }}}},
    },
    plugins: [gpuNames],
  };
}

async function gpus() {
  const {gpus: all} = await api('GET', '/v1/gpus');
  const out = h('div');
  const columns = [
    {title: 'GPU', key: (g) => g.name, cell: (g) => h('span', {}, g.name, isCommonPick(g.name) ? h('span', {class: 'tag', title: `one of the five GPUs most often compared for deep learning: ${COMMON_PICKS}`}, 'common pick') : '')},
    {title: 'Arch', key: (g) => g.arch, cell: (g) => g.arch},
    {title: 'VRAM GB', numeric: true, key: (g) => g.memory_gb, cell: (g) => g.memory_gb},
    {title: 'BF16 TFLOPS', numeric: true, key: (g) => g.bf16_tflops, cell: (g) => g.bf16_tflops},
    {title: '$/h', numeric: true, key: (g) => g.price_per_hour_micros, cell: (g) => money(g.price_per_hour_micros)},
    {title: 'Bandwidth GB/s', numeric: true, key: (g) => g.bandwidth_gbs, cell: (g) => g.bandwidth_gbs},
    {title: 'TFLOPS per $/h', numeric: true, key: (g) => g.tflops_per_dollar, cell: (g) => Math.round(g.tflops_per_dollar)},
    {title: 'Compare', key: (g) => gpuState.compare.includes(g.name) ? 0 : 1, cell: (g) => h('input', {
      type: 'checkbox', 'aria-label': 'compare ' + g.name, checked: gpuState.compare.includes(g.name),
      onchange: (event) => {
        if (event.target.checked) gpuState.compare = [...gpuState.compare, g.name].slice(-3);
        else gpuState.compare = gpuState.compare.filter((n) => n !== g.name);
        render();
      }})},
  ];
  const filters = h('form', {class: 'filters', onsubmit: (e) => e.preventDefault()},
    h('label', {}, 'Search ', h('input', {type: 'search', value: gpuState.text, oninput: (e) => { gpuState.text = e.target.value; render(); }})),
    h('label', {}, 'Min VRAM GB ', h('input', {type: 'number', min: 0, value: gpuState.minVram, oninput: (e) => { gpuState.minVram = e.target.value; render(); }})),
    h('label', {}, 'Max $/h ', h('input', {type: 'number', min: 0, step: '0.05', value: gpuState.maxPrice, oninput: (e) => { gpuState.maxPrice = e.target.value; render(); }})),
    h('label', {}, 'Chart price against ', h('select', {id: 'chart-against', onchange: (e) => { gpuState.against = e.target.value; render(); }},
      Object.entries(GPU_AXES).map(([key, text]) => h('option', {value: key, selected: key === gpuState.against}, text)))));
  const holder = h('div');
  const bubbles = chart('gpu-chart', 'Price per hour against speed; bubble area is VRAM', gpuBubbles([], gpuState.against));
  function render() {
    const text = gpuState.text.toLowerCase();
    let rows = all.filter((g) => (!text || [g.name, ...(g.aliases || []), g.arch, g.vendor].join(' ').toLowerCase().includes(text)) &&
      (!gpuState.minVram || g.memory_gb >= Number(gpuState.minVram)) &&
      (!gpuState.maxPrice || g.price_per_hour_micros <= Number(gpuState.maxPrice) * 1e6));
    const column = columns[gpuState.sort.index];
    rows = rows.sort((a, b) => {
      const x = column.key(a), y = column.key(b);
      const order = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
      return gpuState.sort.descending ? -order : order;
    });
    const shown = charts.find((c) => c.canvas.closest('#gpu-chart'));
    if (shown) {
      const fresh = gpuBubbles(rows, gpuState.against);
      shown.data = fresh.data;
      shown.options.scales.x.title.text = fresh.options.scales.x.title.text;
      shown.update();
    }
    const chosen = gpuState.compare.map((name) => all.find((g) => g.name === name)).filter(Boolean);
    holder.replaceChildren(
      h('p', {class: 'hint'}, `${rows.length} of ${all.length} GPU types. Click a column to sort; tick up to three to compare.`),
      table(columns, rows, {class: 'gpus', sort: gpuState.sort, onSort: (index) => {
        gpuState.sort = {index, descending: gpuState.sort.index === index ? !gpuState.sort.descending : !!columns[index].numeric && index !== 4};
        render();
      }}),
      chosen.length >= 2 ? compareTable(chosen) : '');
  }
  render();
  out.append(title('GPUs'), filters, bubbles, holder);
  return out;
}

function compareTable(chosen) {
  const rows = [
    ['VRAM GB', (g) => g.memory_gb], ['Memory', (g) => g.memory_type], ['Bandwidth GB/s', (g) => g.bandwidth_gbs],
    ['FP32 TFLOPS', (g) => g.fp32_tflops], ['BF16 TFLOPS', (g) => g.bf16_tflops], ['FP8 TFLOPS', (g) => g.fp8_tflops ?? '-'],
    ['Tensor cores', (g) => g.tensor_cores], ['TDP W', (g) => g.tdp_w], ['Rent $/h', (g) => g.rent_usd_per_hour], ['Buy $', (g) => g.buy_usd],
  ];
  return h('section', {'aria-label': 'comparison'}, h('h2', {}, 'Side by side'),
    table([{title: '', cell: (r) => r[0]}, ...chosen.map((g) => ({title: g.name, numeric: true, cell: (r) => r[1](g)}))], rows, {class: 'compare'}));
}

// --- Advisor --------------------------------------------------------------------------------------

const TASKS = ['serve', 'infer', 'lora', 'qlora', 'finetune', 'train'];
const TRAINING = ['lora', 'qlora', 'finetune', 'train'];
const HF_CONFIG = '';  // the model select's value for "paste a Hugging Face config.json"
const WORK_FIELDS = ['tokens', 'samples', 'epochs', 'requests', 'images'];
const advisorState = {market: false, model: 'llama-3-8b', hfConfig: '', task: 'lora', precision: 'bf16', quant: '', batch: '', seq: '',
                      tokens: '', samples: '', epochs: '', requests: '', images: ''};

// The amounts of work the advisor takes for a kind of model and task (as src/advisor/workload.cc
// checks them), each with its label: a diffusion model makes images, an LLM serving answers
// requests. Any other amount would be refused, so its field is not shown.
function workFields(kind, task) {
  const training = TRAINING.includes(task);
  switch (kind) {
    case 'diffusion': return {images: 'Images to generate', requests: 'or requests (one image each)'};
    case 'vision': return training ? {samples: 'Images per epoch', epochs: 'Epochs'} : {images: 'Images to classify'};
    case 'encoder': return training ? {tokens: 'Tokens to train on', samples: 'or samples per epoch', epochs: 'Epochs'}
      : {samples: 'Sequences to encode', requests: 'or requests'};
    default: return training ? {tokens: 'Tokens to train on', samples: 'or samples per epoch', epochs: 'Epochs'}
      : {tokens: 'Tokens to generate', requests: 'or requests to answer'};
  }
}

// What the estimate was made for, from the answer's workload: "5,000 images", or a default amount.
function workText(workload) {
  const w = workload.work || {};
  const count = (n) => Math.round(n).toLocaleString('en-US');
  const parts = [w.tokens && `${count(w.tokens)} tokens`, w.samples && `${count(w.samples)} samples` + (w.epochs > 1 ? ` × ${w.epochs} epochs` : ''),
    w.requests && `${count(w.requests)} requests`, w.images && `${count(w.images)} images`].filter(Boolean);
  return (parts.join(', ') || 'a default amount of work') + (w.assumed ? ' (assumed: give an amount for your job)' : '');
}

async function advisor() {
  const {models} = await api('GET', '/v1/models');
  const field = (id, label, input) => h('div', {class: 'field'}, h('label', {for: id}, label), input);
  const size = (b) => (b >= 1 ? b.toFixed(1) + 'B' : Math.round(b * 1000) + 'M');
  const choose = (id, values, current, text = (v) => v) =>
    h('select', {id}, values.map((v) => h('option', {value: v, selected: v === current}, text(v))));
  const model = h('select', {id: 'model'},
    models.map((m) => h('option', {value: m.name, selected: m.name === advisorState.model}, `${m.name} (${size(m.params_b)})`)),
    h('option', {value: HF_CONFIG, selected: advisorState.model === HF_CONFIG}, 'Another model: its Hugging Face config.json'));
  // A model the zoo lacks: the config.json from its Hugging Face page, pasted or loaded from a file.
  const hfConfig = h('textarea', {id: 'hf-config', rows: 6, spellcheck: 'false', placeholder: '{"model_type": "llama", "hidden_size": 4096, ...}'}, advisorState.hfConfig);
  const hfFile = h('input', {type: 'file', accept: '.json,application/json', 'aria-label': 'load config.json from a file',
    onchange: async (event) => { if (event.target.files[0]) hfConfig.value = await event.target.files[0].text(); }});
  const hfBox = h('div', {class: 'hf-config wide'}, h('label', {for: 'hf-config'}, 'config.json'), hfConfig, hfFile);
  const task = choose('task', TASKS, advisorState.task);
  const precision = choose('precision', ['bf16', 'fp16', 'fp32', 'fp8'], advisorState.precision);
  const quant = choose('quant', ['', 'int8', 'int4', 'q4_0', 'q8_0'], advisorState.quant, (q) => q || 'none');
  const number = (id, placeholder) => h('input', {id, type: 'number', min: 1, placeholder, value: advisorState[id]});
  const batch = number('batch', "the task's default");
  const seq = number('seq', "the model's default");
  const work = Object.fromEntries(WORK_FIELDS.map((id) => [id, number(id, id === 'epochs' ? '1' : 'a default amount')]));
  const workBoxes = Object.fromEntries(WORK_FIELDS.map((id) => [id, field(id, id, work[id])]));
  const seqBox = field('seq', 'Sequence length', seq);
  // What the model is (a config.json is taken for a language model: it names no other kind).
  const kindOf = () => (models.find((m) => m.name === model.value) || {kind: 'decoder_lm'}).kind;
  // Shows only the fields that apply to this model and task. A value belongs to the model it was
  // typed for (a batch of 64 images is not a batch of 64 sequences), so a new model clears them; a
  // new task keeps those that still apply and clears those that no longer do, so nothing hidden is
  // sent or comes back later to change an estimate unseen.
  const shape = (modelChanged) => {
    hfBox.hidden = model.value !== HF_CONFIG;
    const kind = kindOf();
    // Training diffusion models is not modelled: those tasks are not offered for them.
    for (const option of task.options) option.disabled = kind === 'diffusion' && TRAINING.includes(option.value);
    if (task.selectedOptions[0]?.disabled) task.value = 'infer';
    const applies = workFields(kind, task.value);
    const hasSeq = TRAINING.includes(task.value) && kind !== 'vision' && kind !== 'diffusion';
    if (modelChanged) for (const input of [batch, seq, ...Object.values(work)]) input.value = '';
    for (const id of WORK_FIELDS) {
      workBoxes[id].hidden = !(id in applies);
      if (workBoxes[id].hidden) work[id].value = '';
      else workBoxes[id].querySelector('label').textContent = applies[id];
    }
    seqBox.hidden = !hasSeq;
    if (!hasSeq) seq.value = '';
  };
  model.addEventListener('input', () => shape(true));
  task.addEventListener('input', () => shape(false));
  shape(false);
  // This cloud's GPU types (the default), or every type in the catalog.
  const market = h('input', {id: 'advice-market', type: 'checkbox', checked: advisorState.market});
  const answer = h('div', {'aria-live': 'polite', class: 'advice-answer', tabindex: -1});
  const form = h('form', {class: 'card advisor-form', onsubmit: async (event) => {
    event.preventDefault();
    Object.assign(advisorState, {market: market.checked, model: model.value, hfConfig: hfConfig.value, task: task.value, precision: precision.value,
                                 quant: quant.value, batch: batch.value, seq: seq.value},
                  Object.fromEntries(WORK_FIELDS.map((id) => [id, work[id].value])));
    const workload = {task: task.value, precision: precision.value};
    if (model.value !== HF_CONFIG) {
      workload.model = model.value;
    } else {
      try {
        workload.hf_config = JSON.parse(hfConfig.value);
      } catch (error) {
        answer.replaceChildren(errorBox(new Error(`config.json is not JSON (${error.message}): paste the whole file.`)));
        return;
      }
    }
    if (quant.value) workload.quant = quant.value;
    if (batch.value) workload.batch = Number(batch.value);
    if (seq.value) workload.seq = Number(seq.value);
    for (const id of WORK_FIELDS) if (work[id].value) workload[id] = Number(work[id].value);
    answer.replaceChildren(h('p', {class: 'hint'}, 'Estimating...'));
    try {
      const advised = await api('POST', '/v1/advise', {workload, scope: market.checked ? 'market' : 'cluster'});
      destroyCharts();  // the previous answer's
      answer.replaceChildren(...advice(advised));
    } catch (error) {
      answer.replaceChildren(errorBox(error));
    }
    // The answer comes below a tall form: bring it into view rather than leave it below the fold.
    answer.scrollIntoView({block: 'start'});
    answer.focus({preventScroll: true});
  }},
  field('model', 'Model', model), hfBox, field('task', 'Task', task), field('precision', 'Precision', precision),
  field('quant', 'Quantisation', quant), field('batch', 'Batch', batch), seqBox,
  h('p', {class: 'hint wide'}, 'Amount of work: one of these (empty: a default amount). They are cleared when the model changes.'),
  WORK_FIELDS.map((id) => workBoxes[id]),
  h('label', {class: 'check wide'}, market, ' The whole market: every GPU type, not only those this cloud has'),
  h('div', {class: 'wide'}, h('button', {type: 'submit'}, 'Advise')));
  return [title('Which GPU?'), form, answer];
}

function hours(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min`;
  return seconds < 172800 ? `${(seconds / 3600).toFixed(1)} h` : `${(seconds / 86400).toFixed(1)} days`;
}

// The figure the advisor ranks by: tokens/s for language models, images or samples/s otherwise.
function rate(estimate) {
  const t = estimate.throughput || {};
  const [value, unit] = t.decode_tokens_per_s ? [t.decode_tokens_per_s, 'tokens/s']
    : t.train_tokens_per_s ? [t.train_tokens_per_s, 'tokens/s']
    : t.images_per_s ? [t.images_per_s, 'images/s']
    : t.samples_per_s ? [t.samples_per_s, 'samples/s'] : [null, ''];
  return value === null ? '-' : `${value >= 100 ? Math.round(value) : value.toPrecision(3)} ${unit}`;
}

const gpusText = (gpu, count) => `${count > 1 ? count + 'x ' : ''}${gpu}`;

// Buy or rent, for the pick: the hours of use after which buying beats renting here (the advisor
// counts the GPUs' power), as hours a day over a year, which is how people think about a purchase.
function buyOrRent(estimate) {
  if (!estimate || !estimate.break_even_hours) return '';
  const perDay = estimate.break_even_hours / 365;
  const verdict = perDay > 24 ? 'so renting wins: even around the clock a year is not enough'
    : `so buy only if you will keep ${estimate.count > 1 ? 'them' : 'it'} busy more than ${perDay.toFixed(1)} hours a day for a year`;
  return h('p', {id: 'buy-or-rent'}, h('strong', {}, 'Buy or rent? '),
    `Buying ${gpusText(estimate.gpu, estimate.count)} costs about $${Math.round(estimate.buy_usd).toLocaleString('en-US')}; `,
    `renting here costs $${estimate.rent_usd_per_hour.toFixed(2)}/h and this job $${estimate.cost_usd.toFixed(2)}. `,
    `Buying pays off after ${Math.round(estimate.break_even_hours).toLocaleString('en-US')} hours of use, ${verdict}.`);
}

// Time and cost of the job on each GPU type that fits, in the advisor's order (best first): two
// charts side by side, each with one scale, rather than two scales on one chart that read as one.
function adviceCharts(fitting) {
  const shown = fitting.slice(0, 15);
  const labels = shown.map((e) => gpusText(e.gpu, e.count));
  const inHours = Math.max(...shown.map((e) => e.time_s)) >= 3600;
  const bars = (id, what, axis, data, color, text) => chart(id, `${what} of the job on the ${shown.length} best GPU types that fit`, {
    type: 'bar',
    data: {labels, datasets: [{label: what, data, backgroundColor: color}]},
    options: {
      indexAxis: 'y',
      scales: {x: {beginAtZero: true, title: axisTitle(axis)}},
      plugins: {legend: {display: false}, tooltip: {callbacks: {label: (item) => text(item.raw)}}},
    },
  }, 90 + 30 * shown.length);
  return h('div', {class: 'chart-pair'},
    bars('advice-cost-chart', 'Cost', 'dollars', shown.map((e) => e.cost_usd), PALETTE.highlight, (v) => '$' + v.toFixed(2)),
    bars('advice-time-chart', 'Time', inHours ? 'hours' : 'minutes', shown.map((e) => e.time_s / (inHours ? 3600 : 60)), PALETTE.accent,
      (v) => hours(v * (inHours ? 3600 : 60))));
}

// Types whose agents ran suanli-gpu-probe are predicted from what their GPUs measured (a card
// slower than a healthy one of its model is predicted slower), the rest from their datasheets.
function measuredNote(estimates) {
  const measured = [...new Map(estimates.filter((e) => e.measured).map((e) => [e.gpu, e.measured])).entries()];
  if (!measured.length) return '';
  const said = measured.map(([gpu, m]) => `${gpu} (${m.gpus} GPU${m.gpus > 1 ? 's' : ''}: memory at ${Math.round(m.bandwidth_scale * 100)} %, tensor at ${Math.round(m.compute_scale * 100)} % of a healthy card)`);
  return h('p', {class: 'hint', id: 'advice-measured'}, `Predicted from what this cloud's GPUs measured, not their datasheets: ${said.join('; ')}.`);
}

function advice(answer) {
  const pick = answer.recommendation;
  const fitting = answer.estimates.filter((e) => e.fits);
  const chosen = answer.estimates.find((e) => e.gpu === pick.gpu && e.count === pick.count);
  const cluster = answer.scope === 'cluster';
  // "Deploy this" only for what this cloud has, and only the pick itself.
  const deployable = chosen && chosen.cluster_gpus >= chosen.count;
  // How far speed, time and cost may be off: the advisor's median error on measurements from
  // sources it was not fitted on, for this kind of work (docs/advisor.md).
  const error = answer.speed_error;
  const band = (text) => (error && text !== '-' ? h('span', {}, text, h('span', {class: 'hint band'}, ` ±${Math.round(error.median_percent)}%`)) : text);
  return [
    h('section', {class: 'card recommendation', 'aria-label': 'recommendation'},
      h('h2', {}, pick.gpu ? `Pick ${gpusText(pick.gpu, pick.count)}` : 'Nothing fits'),
      h('p', {}, pick.reason),
      h('p', {class: 'hint', id: 'advice-scope'}, cluster
        ? `Ranked on this cloud's GPU types (${answer.estimates.length}); tick "the whole market" to see every type.`
        : (answer.scope_note ? `Every GPU type in the catalog: ${answer.scope_note}.` : 'Every GPU type in the catalog, this cloud\'s or not.')),
      h('p', {class: 'hint', id: 'advice-work'}, `${answer.workload.model}, ${answer.workload.task}: ${workText(answer.workload)}.`),
      h('p', {class: 'hint', id: 'advice-error'}, error
        ? `Speed, time and cost are typically within ±${error.median_percent.toFixed(1)} %: the median error of these predictions (${error.kind.replaceAll('_', ' ')}) on ${error.rows} published measurements from sources the advisor was not fitted on.`
        : 'No published measurements of this kind of work to check the predictions against: treat speed, time and cost as rough.'),
      measuredNote(answer.estimates),
      buyOrRent(chosen),
      deployable ? h('a', {class: 'button', href: `#/deploy?gpu=${encodeURIComponent(pick.gpu)}&count=${pick.count}`}, 'Deploy this')
        : (pick.gpu ? h('p', {class: 'hint'}, `This cloud has no ${gpusText(pick.gpu, pick.count)} to deploy on.`) : '')),
    fitting.length ? adviceCharts(fitting) : '',
    h('h2', {}, `${cluster ? "This cloud's GPU types" : 'Every GPU type'} (${fitting.length} of ${answer.estimates.length} fit)`),
    table([
      {title: 'GPU', cell: (e) => (e.measured ? h('span', {}, gpusText(e.gpu, e.count), h('span', {class: 'hint'}, ' measured')) : gpusText(e.gpu, e.count))},
      {title: 'Here', numeric: true, cell: (e) => (e.cluster_gpus ? `${e.free_now} of ${e.cluster_gpus} free` : '-')},
      {title: 'Fits', cell: (e) => (e.fits ? 'yes' : 'no: ' + e.reason)},
      {title: 'Memory GB per GPU', numeric: true,
       cell: (e) => `${(e.memory_gb.total ?? 0).toFixed(1)} of ${(e.memory_gb.available ?? 0).toFixed(0)}`},
      {title: 'Speed', numeric: true, cell: (e) => band(rate(e))},
      {title: 'Time', numeric: true, cell: (e) => (e.fits ? band(hours(e.time_s)) : '-')},
      {title: 'Cost', numeric: true, cell: (e) => (e.fits ? band('$' + e.cost_usd.toFixed(2)) : '-')},
      {title: '$/h', numeric: true, cell: (e) => '$' + e.rent_usd_per_hour.toFixed(2)},
      {title: 'Buying pays off after', numeric: true,
       cell: (e) => (e.break_even_hours ? hours(e.break_even_hours * 3600) + ' of use' : '-')},
    ], answer.estimates, {class: 'advice'}),
  ];
}

// --- Deploy ---------------------------------------------------------------------------------------

async function deploy(query = '') {
  const [{templates}, {gpus: free}, {ssh_keys: keys}] = await Promise.all([
    api('GET', '/v1/templates'), api('GET', '/v1/availability'), api('GET', '/v1/ssh-keys')]);
  const wanted = new URLSearchParams(query);  // from the advisor's Deploy-this link
  // The template gallery: one card per template (what it runs, its ports and disks), a radio group
  // underneath, so arrow keys move between them.
  const facts = (t) => [t.image, t.ports.length ? 'ports ' + t.ports.join(', ') : 'no ports',
    `disk ${t.container_disk_gb} GB`, `volume ${t.volume_gb} GB at ${t.volume_mount_path}`].join(' · ');
  const gallery = h('fieldset', {class: 'gallery'}, h('legend', {}, 'Template'), templates.map((t, index) =>
    h('label', {class: 'template-card'},
      h('input', {type: 'radio', name: 'template', value: t.id, checked: index === 0, required: true}),
      h('strong', {}, t.name), h('span', {}, t.description), h('span', {class: 'hint'}, facts(t)))));
  const chosenTemplate = () => gallery.querySelector('input[name=template]:checked')?.value;
  // Shares (0.5 of a GPU) use what partly used devices have left: shown beside the whole ones.
  const sharedFree = (g) => g.shared_free_milli > 0 ? ` + ${g.shared_free_milli / 1000} shared` : '';
  // A GPU nobody uses whose node lacks the vCPU or RAM a pod needs beside it is not free (stranded).
  const stranded = (g) => g.stranded > 0 ? ` (${g.stranded} more idle, without the vCPU or RAM to use ${g.stranded > 1 ? 'them' : 'it'})` : '';
  const gpuLabel = (g) => `${g.gpu_type}${g.simulated ? ' (simulated)' : ''}: ${g.free}${sharedFree(g)} of ${g.total} free${stranded(g)}, ${money(g.price_per_hour_micros)}/h`;
  const gpu = h('select', {id: 'gpu'}, free.map((g) => h('option', {value: g.gpu_type, selected: g.gpu_type === wanted.get('gpu')}, gpuLabel(g))));
  // Whole GPUs, or a share of one (0.5, 0.25: several pods on one device, each billed its part).
  const count = h('input', {id: 'count', type: 'number', min: 0.001, max: 64, step: 'any', value: wanted.get('count') || 1, required: true,
    title: 'Whole GPUs (1, 2, 4, 8) or a share of one GPU (0.5, 0.25)'});
  const unavailable = wanted.get('gpu') && !free.some((g) => g.gpu_type === wanted.get('gpu'))
    ? h('p', {class: 'error', role: 'alert'}, `No ${wanted.get('gpu')} is free now: pick a type that is.`) : '';
  // A name to know the pod by in the list (the server's rule: letters, digits, . _ @ + -); empty: its id.
  const name = h('input', {id: 'pod-name', type: 'text', maxlength: 64, pattern: '[A-Za-z0-9][A-Za-z0-9._@+\\-]*',
    placeholder: 'e.g. finetune-run-3 (empty: the pod id)', autocomplete: 'off'});
  const env = h('textarea', {id: 'env', rows: 3, placeholder: 'KEY=value, one per line'});
  // Resources: empty means the server's default (2 vCPU and 8 GB of RAM per GPU; the template's disks).
  const resource = (id, label, max) => h('label', {}, label, ' ', h('input', {id, type: 'number', min: id === 'volume' ? 0 : 1, max}));
  const resources = h('fieldset', {class: 'resources'}, h('legend', {}, 'Resources (empty: the default shown)'),
    resource('vcpu', 'vCPU', 1024), resource('memory', 'RAM GB', 16384), resource('disk', 'Container disk GB', 10000), resource('volume', 'Volume GB', 100000));
  // Auto-stop: durations as the API takes them ("30m", "2h"); empty: never.
  const stopInput = (id, label, placeholder) => h('label', {}, label, ' ', h('input', {id, type: 'text', placeholder, pattern: '[0-9]+[smhd]?([0-9]+[smhd])*', size: 8}));
  const autoStop = h('fieldset', {class: 'resources'}, h('legend', {}, 'Auto-stop (empty: never)'),
    stopInput('idle-stop-after', 'Stop when idle for', '30m'), stopInput('stop-after', 'Stop after running', '8h'),
    h('label', {}, 'Before stopping, run ', h('input', {id: 'pre-stop-command', type: 'text', placeholder: 'a shell command, e.g. save a checkpoint', size: 32})),
    stopInput('terminate-after-stopped', 'Terminate once left stopped for', '7d'),
    h('label', {}, h('input', {id: 'terminate-deletes-volume', type: 'checkbox'}), ' deleting its volume with it (volumes of your own stay)'),
    h('p', {class: 'hint'}, 'Idle: GPU below 5%, CPU below 10% of a core, no SSH session and no HTTP through the proxy. A warning event comes first; see Events.'));
  const sshKey = h('textarea', {id: 'ssh-key', rows: 2, spellcheck: 'false', placeholder: 'ssh-ed25519 AAAA... you@laptop'});
  const keysNote = h('p', {class: 'hint'}, keys.length
    ? `Your ${keys.length} SSH key${keys.length > 1 ? 's go' : ' goes'} into the pod (${keys.map((k) => k.name).join(', ')}); add another here if you like.`
    : 'No SSH key yet: paste your public key (~/.ssh/id_ed25519.pub) to reach the pod by SSH. It is kept for your next pods.');
  const price = h('p', {class: 'price', 'aria-live': 'polite'});
  const status = h('div', {role: 'status'});
  const deployButton = h('button', {type: 'submit'}, 'Deploy');
  const update = () => {
    deployButton.disabled = free.length === 0;
    const t = templates.find((x) => x.id === chosenTemplate());
    const gpus = Number(count.value) || 1;
    const defaults = {vcpu: Math.max(1, Math.floor(2 * gpus)), memory: Math.max(1, Math.floor(8 * gpus)), disk: t ? t.container_disk_gb : '', volume: t ? t.volume_gb : ''};
    for (const [id, value] of Object.entries(defaults)) resources.querySelector('#' + id).placeholder = value;
    const g = free.find((x) => x.gpu_type === gpu.value);
    price.textContent = g ? `${money(g.price_per_hour_micros * Number(count.value || 0))} per hour for the GPUs while it runs, billed by the second.` : 'No GPU type has free GPUs now.';
  };
  [gallery, gpu, count].forEach((input) => input.addEventListener('input', update));
  update();
  // Others deploy and stop meanwhile: the free counts and prices are fetched again every 5 s (the
  // first time 5 s from now: they were just fetched).
  poll(5000, async () => {
    const latest = await api('GET', '/v1/availability').catch(() => null);
    if (!latest) return;
    free.splice(0, free.length, ...latest.gpus);
    for (const g of free) {
      const option = [...gpu.options].find((o) => o.value === g.gpu_type);
      if (option) option.textContent = gpuLabel(g);
      else gpu.append(h('option', {value: g.gpu_type}, gpuLabel(g)));
    }
    update();
  }, 5000);
  const form = h('form', {class: 'card', onsubmit: async (event) => {
    event.preventDefault();
    const body = {template: chosenTemplate(), gpu_type: gpu.value, gpu_count: Number(count.value)};
    if (name.value.trim()) body.name = name.value.trim();
    if (currentProject()) body.project = currentProject();
    for (const [id, key] of [['vcpu', 'vcpu'], ['memory', 'memory_gb'], ['disk', 'container_disk_gb'], ['volume', 'volume_gb']]) {
      const value = resources.querySelector('#' + id).value;
      if (value !== '') body[key] = Number(value);
    }
    for (const [id, key] of [['idle-stop-after', 'idle_stop_after'], ['stop-after', 'stop_after'], ['pre-stop-command', 'pre_stop_command'],
      ['terminate-after-stopped', 'terminate_after_stopped']]) {
      const value = autoStop.querySelector('#' + id).value.trim();
      if (value !== '') body[key] = value;
    }
    if (autoStop.querySelector('#terminate-deletes-volume').checked) body.terminate_deletes_volume = true;
    const pairs = env.value.split('\n').map((line) => line.trim()).filter(Boolean);
    if (pairs.length) {
      body.env = {};
      for (const pair of pairs) {
        const at = pair.indexOf('=');
        if (at <= 0) { status.replaceChildren(errorBox(new Error(`"${pair}" is not KEY=value`))); return; }
        body.env[pair.slice(0, at)] = pair.slice(at + 1);
      }
    }
    try {
      const key = sshKey.value.trim();
      if (key) {
        await api('POST', '/v1/ssh-keys', {name: key.split(/\s+/)[2] || 'from the console', public_key: key});
        sshKey.value = '';  // kept now: a second try must not add it again
      }
      const pod = await api('POST', '/v1/pods', body);
      location.hash = '#/pods/' + pod.id;
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  }},
  gallery,
  h('label', {for: 'pod-name'}, 'Name'), name,
  h('label', {for: 'gpu'}, 'GPU type'), gpu, unavailable,
  h('label', {for: 'count'}, 'GPUs'), count,
  resources, autoStop,
  h('label', {for: 'env'}, 'Environment'), env,
  h('label', {for: 'ssh-key'}, 'SSH public key'), sshKey, keysNote,
  price, deployButton, status);
  return [title('Deploy a pod'), currentProject()
    ? h('p', {class: 'hint', id: 'deploy-project'}, `Into project ${projectName(currentProject())}: its members see and run the pod, and its owner pays.`) : '', form];
}

// --- Pods -----------------------------------------------------------------------------------------

function podState(pod) {
  const text = pod.state === 'running' ? (pod.ready ? 'running, ready' : 'running, not ready yet') : pod.state;
  return h('span', {class: 'state state-' + pod.state}, text);
}

const podsState = {showTerminated: false};

// The pods list. Terminated pods stay in the list the server keeps (their cost is history), but
// they are hidden unless asked for: they would soon outnumber the live ones. An admin sees
// everyone's pods, so whose each is.
async function pods() {
  const isAdmin = localStorage.getItem(ROLE_KEY) === 'admin';
  const names = isAdmin ? Object.fromEntries((await api('GET', '/v1/users').catch(() => ({users: []}))).users
    .map((u) => [u.id, u.name])) : {};
  const holder = h('div', {'aria-live': 'polite'});
  let latest = null;
  const project = currentProject();
  const show = () => {
    const list = latest.filter((p) => (podsState.showTerminated || p.state !== 'terminated') && (p.project_id || '') === project);
    const hidden = latest.filter((p) => (p.project_id || '') === project).length - list.length;
    const inProject = latest.filter((p) => (p.project_id || '') === project);
    holder.replaceChildren(...(inProject.length === 0
      ? [h('p', {}, project ? `No pods in project ${projectName(project)} yet. ` : 'No pods yet. ', h('a', {href: '#/deploy'}, 'Deploy one.'))]
      : [list.length ? table([
          {title: 'Pod', cell: (p) => h('a', {href: '#/pods/' + p.id}, p.name || p.id)},
          isAdmin && {title: 'Owner', cell: (p) => names[p.owner_id] || p.owner_id},
          {title: 'State', cell: podState},
          {title: 'GPU', cell: (p) => `${podGpus(p)}x ${p.gpu_type}`},
          {title: 'Node', cell: (p) => p.node_id || '-'},
          {title: 'Uptime', numeric: true, cell: (p) => duration(p.uptime_s)},
          {title: 'Cost', numeric: true, cell: (p) => moneyCell(p.cost_micros)},
          {title: 'Why', cell: (p) => p.state_reason || ''},
        ].filter(Boolean), list, {class: 'pods'}) : h('p', {}, 'No live pods. ', h('a', {href: '#/deploy'}, 'Deploy one.')),
        hidden ? h('p', {class: 'hint'}, `${hidden} terminated pod${hidden > 1 ? 's' : ''} hidden.`) : '']));
  };
  const toggle = h('input', {id: 'show-terminated', type: 'checkbox', checked: podsState.showTerminated,
    onchange: (event) => { podsState.showTerminated = event.target.checked; if (latest) show(); }});
  poll(2000, async () => {
    try {
      latest = (await everyPage('/v1/pods?view=compact', 'pods')).pods;
      show();
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  });
  return [title('Pods', ' ', h('a', {class: 'button', href: '#/deploy'}, 'Deploy')),
    h('label', {class: 'check'}, toggle, ' Show terminated pods'), holder];
}

// --- Serverless endpoints -------------------------------------------------------------------------

function endpointWorkers(endpoint) {
  const count = (state) => endpoint.workers.filter((w) => w.state === state).length;
  return `${endpoint.workers.length} (${endpoint.min_workers}-${endpoint.max_workers}): ` +
    `${count('running')} busy, ${count('idle')} idle, ${count('initializing')} starting`;
}

async function endpoints() {
  const {templates} = await api('GET', '/v1/templates');
  const holder = h('div', {'aria-live': 'polite'});
  const refresh = async () => {
    try {
      const {endpoints: list} = await api('GET', '/v1/endpoints');
      holder.replaceChildren(list.length === 0
        ? h('p', {}, 'No endpoints yet: create one below; its jobs go to the RunPod-compatible API under /v2.')
        : table([
          {title: 'Endpoint', cell: (e) => e.name},
          {title: 'Job API', cell: (e) => h('code', {}, e.url + '/run')},
          {title: 'Workers', cell: endpointWorkers},
          {title: 'Queued', numeric: true, cell: (e) => String(e.jobs.in_queue)},
          {title: 'Running', numeric: true, cell: (e) => String(e.jobs.in_progress)},
          {title: 'Done', numeric: true, cell: (e) => String(e.jobs.completed)},
          {title: 'Failed', numeric: true, cell: (e) => String(e.jobs.failed + e.jobs.timed_out)},
          {title: 'Note', cell: (e) => e.scale_error || ''},
          {title: '', cell: (e) => h('button', {type: 'button', onclick: async () => {
            try { await api('DELETE', '/v1/endpoints/' + e.id); await refresh(); } catch (error) { holder.replaceChildren(errorBox(error)); }
          }}, 'Delete')},
        ], list, {class: 'endpoints'}));
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  };
  poll(2000, refresh);
  const name = h('input', {id: 'endpoint-name', required: true, maxlength: 64, placeholder: 'name', 'aria-label': 'endpoint name'});
  const template = h('select', {id: 'endpoint-template', 'aria-label': 'worker template'},
    templates.map((t) => h('option', {value: t.id, selected: t.id === 'demo-worker' ? '' : undefined}, t.name)));
  const gpu = h('input', {id: 'endpoint-gpu', placeholder: 'GPU (4090, 0.5 share: 4090)', value: 'cheapest', 'aria-label': 'GPU type of each worker'});
  const max = h('input', {id: 'endpoint-max', type: 'number', min: 1, max: 100, value: 3, 'aria-label': 'most workers'});
  const idle = h('input', {id: 'endpoint-idle', type: 'number', min: 1, max: 3600, value: 5, 'aria-label': 'idle timeout in seconds'});
  // How workers get their jobs: they take them from the queue, or they are HTTP servers to which
  // each job is posted (a vLLM server: port 8000, /v1/completions).
  const mode = h('select', {id: 'endpoint-mode', 'aria-label': 'how workers get jobs'},
    h('option', {value: 'queue'}, 'workers take jobs'), h('option', {value: 'http'}, 'post jobs to a port'));
  const port = h('input', {id: 'endpoint-http-port', type: 'number', min: 1, max: 65535, placeholder: 'port', 'aria-label': 'workers\' HTTP port'});
  const path = h('input', {id: 'endpoint-http-path', placeholder: '/path', value: '/', 'aria-label': 'path jobs are posted to'});
  const httpFields = h('span', {hidden: true}, port, path);
  mode.addEventListener('change', () => { httpFields.hidden = mode.value !== 'http'; });
  const out = h('div', {'aria-live': 'polite'});
  const create = h('form', {class: 'inline', onsubmit: async (event) => {
    event.preventDefault();
    try {
      const body = {name: name.value.trim(), template: template.value, gpu_type: gpu.value.trim(),
        max_workers: Number(max.value), idle_timeout_s: Number(idle.value), worker_mode: mode.value};
      if (mode.value === 'http') {
        if (port.value) body.http_port = Number(port.value);
        body.http_path = path.value.trim();
      }
      await api('POST', '/v1/endpoints', body);
      name.value = '';
      out.replaceChildren();
      await refresh();
    } catch (error) {
      out.replaceChildren(errorBox(error));
    }
  }}, name, template, gpu, h('label', {}, 'max workers ', max), h('label', {}, 'idle s ', idle), mode, httpFields, h('button', {type: 'submit'}, 'Create endpoint'));
  return [title('Endpoints'), h('p', {class: 'hint'}, 'Workers are pods that start when jobs wait and stop when idle; you pay for their seconds.'),
    holder, h('h2', {}, 'New endpoint'), create, out];
}

// --- Volumes and their snapshots ------------------------------------------------------------------

// Volumes of one's own (they outlive pods and follow them from node to node) and their snapshots:
// create, delete, snapshot, restore a snapshot into a new volume. The server refuses what cannot be
// done (a snapshot of a volume a running pod writes, say) and its reason is shown as it is.
// The volumes and snapshots of the project in the switcher (or your own), as the pods list.
async function volumes() {
  const project = currentProject();
  const inScope = (thing) => (thing.project_id || '') === project;
  const volumeList = h('div', {'aria-live': 'polite'});
  const snapshotList = h('div', {'aria-live': 'polite'});
  const out = h('div', {'aria-live': 'polite'});
  const from = h('select', {id: 'volume-from', 'aria-label': 'fill it from a snapshot'});
  const act = async (call) => {
    try { await call(); out.replaceChildren(); await refresh(); } catch (error) { out.replaceChildren(errorBox(error)); }
  };
  const refresh = async () => {
    try {
      const [{volumes: allVolumes}, {snapshots: allSnapshots}] = await Promise.all([api('GET', '/v1/volumes'), api('GET', '/v1/snapshots')]);
      const vols = allVolumes.filter(inScope);
      const snaps = allSnapshots.filter(inScope);
      volumeList.replaceChildren(vols.length === 0
        ? h('p', {}, project ? `No volumes in project ${projectName(project)} yet: create one below; the project's pods mount it.`
          : 'No volumes yet: create one below, then attach it to pods (suanli pods create --volume NAME:/data).')
        : table([
          {title: 'Volume', cell: (v) => v.name},
          {title: 'Size', numeric: true, cell: (v) => `${v.size_gb} GB`},
          {title: 'Node', cell: (v) => v.shared ? 'any (shared backend)' : (v.home_node || '-')},
          {title: 'State', cell: (v) => v.state},
          {title: 'Pods', cell: (v) => v.attached_to.length ? v.attached_to.join(', ') + (v.attached_read_write ? ' (rw)' : ' (ro)') : '-'},
          {title: '$/month', numeric: true, cell: (v) => moneyCell(v.storage_price_per_gb_month_micros * v.size_gb)},
          {title: 'Cost', numeric: true, cell: (v) => moneyCell(v.cost_micros)},
          {title: '', cell: (v) => h('span', {class: 'actions'},
            h('button', {type: 'button', onclick: () => act(() => api('POST', `/v1/volumes/${v.id}/snapshots`, {}))}, 'Snapshot'),
            h('button', {type: 'button', onclick: () => act(() => api('DELETE', '/v1/volumes/' + v.id))}, 'Delete'))},
        ], vols, {class: 'volumes'}));
      snapshotList.replaceChildren(snaps.length === 0
        ? h('p', {}, 'No snapshots yet: a snapshot is a point-in-time copy of a volume (stop the pod that writes it first).')
        : table([
          {title: 'Snapshot', cell: (s) => s.name},
          {title: 'Of volume', cell: (s) => s.volume_name},
          {title: 'State', cell: (s) => s.state === 'failed' ? `failed: ${s.state_reason}` : s.state},
          {title: 'Size', numeric: true, cell: (s) => s.state === 'ready' ? bytes(s.size_bytes) : '-'},
          {title: 'SHA-256', cell: (s) => s.sha256 ? h('code', {title: s.sha256}, s.sha256.slice(0, 12)) : '-'},
          {title: 'Cost', numeric: true, cell: (s) => moneyCell(s.cost_micros)},
          {title: 'Taken', cell: (s) => s.created_at.replace('T', ' ').slice(0, 19)},
          {title: '', cell: (s) => h('button', {type: 'button', onclick: () => act(() => api('DELETE', '/v1/snapshots/' + s.id))}, 'Delete')},
        ], snaps, {class: 'snapshots'}));
      const chosen = from.value;
      from.replaceChildren(h('option', {value: ''}, 'empty'),
        ...snaps.filter((s) => s.state === 'ready').map((s) => h('option', {value: s.id, selected: s.id === chosen ? '' : undefined}, `from snapshot ${s.name}`)));
    } catch (error) {
      volumeList.replaceChildren(errorBox(error));
    }
  };
  poll(3000, refresh);
  const name = h('input', {id: 'volume-name', required: true, maxlength: 64, placeholder: 'name', 'aria-label': 'volume name'});
  const size = h('input', {id: 'volume-size', type: 'number', min: 1, max: 100000, placeholder: 'GB', 'aria-label': 'size in GB'});
  const shared = h('input', {id: 'volume-shared', type: 'checkbox'});
  const create = h('form', {class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    const body = {name: name.value.trim()};
    if (size.value) body.size_gb = Number(size.value);
    if (from.value) body.from_snapshot = from.value;
    if (shared.checked) body.shared = true;
    if (project) body.project = project;
    act(async () => { await api('POST', '/v1/volumes', body); name.value = ''; });
  }}, name, h('label', {}, 'size ', size), from,
  h('label', {title: 'On the shared backend (an NFS export every such node mounts): any of those nodes runs its pods, and its data never moves'}, shared, ' shared backend'),
  h('button', {type: 'submit'}, 'Create volume'));
  return [title('Volumes'), project
    ? h('p', {class: 'hint', id: 'volumes-project'}, `Project ${projectName(project)}'s: mounted by its pods only, billed to its owner.`) : '',
  h('p', {class: 'hint'}, 'Billed per GB-month by the second, attached or not. The same: suanli volumes.'),
    volumeList, h('h2', {}, 'New volume'), create, out, h('h2', {}, 'Snapshots'), snapshotList];
}

function connections(pod) {
  const items = [];
  const host = pod.node_address && pod.node_address.includes(':') ? `[${pod.node_address}]` : pod.node_address;
  // Only a running pod has ports to reach: a stopped one's host ports may be another pod's now.
  const mappings = pod.state === 'running' ? (pod.port_mappings || []) : [];
  for (const port of mappings) {
    if (port.container_port === 22 && pod.node_address) {
      items.push(h('li', {}, 'SSH: ', h('code', {}, `ssh -p ${port.host_port} root@${pod.node_address}`)));
    } else if (port.container_port === 8888 && pod.jupyter_token && host) {
      items.push(h('li', {}, h('a', {href: `http://${host}:${port.host_port}/lab?token=${pod.jupyter_token}`, target: '_blank', rel: 'noopener noreferrer'}, 'Jupyter')));
    } else if (port.protocol === 'http' && pod.link_token) {
      items.push(h('li', {}, h('a', {href: `/v1/pods/${pod.id}/proxy/${port.container_port}/?suanli_link=${pod.link_token}`, target: '_blank', rel: 'noopener noreferrer'}, `HTTP port ${port.container_port}`)));
    } else {
      items.push(h('li', {}, `${port.container_port}/${port.protocol} on host port ${port.host_port}`));
    }
  }
  return items.length ? h('ul', {class: 'connect'}, items) : h('p', {class: 'hint'}, 'No ports to reach while it is not running.');
}

function pod(id) {
  const holder = h('div', {'aria-live': 'polite'});
  const logs = h('pre', {class: 'logs', tabindex: 0, 'aria-label': 'logs'});
  let logsOf = null;  // the stop whose saved logs are shown
  const status = h('div', {role: 'status'});
  const act = async (action) => {
    try {
      if (action === 'terminate') {
        if (!confirm('Terminate this pod and delete its volume?')) return;
        await api('DELETE', `/v1/pods/${id}?force=true`);
      } else {
        await api('POST', `/v1/pods/${id}/${action}`, {});
      }
      status.replaceChildren();
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  poll(2000, async () => {
    try {
      const p = await api('GET', '/v1/pods/' + id);
      const rows = [
        ['State', podState(p)], ['Why', p.state_reason || '-'],
        ['GPU', `${podGpus(p)}x ${p.gpu_type}`], ['Node', p.node_id || '-'], ['Image', p.image],
        ['Price', `${money(p.gpu_price_per_hour_micros)}/h GPU` + (p.storage_price_per_hour_micros ? `, ${money(p.storage_price_per_hour_micros)}/h storage` : '')],
        ['Uptime', duration(p.uptime_s)], ['Cost so far', money(p.cost_micros)],
      ];
      if (p.pull) {
        rows.splice(2, 0, ['Pulling', h('progress', {max: p.pull.total_bytes || undefined, value: p.pull.current_bytes},
          bytes(p.pull.current_bytes))]);
      }
      const autoStops = [p.idle_stop_after_s ? `when idle for ${duration(p.idle_stop_after_s)}` : '',
        p.stop_after_s ? `after ${duration(p.stop_after_s)} of running` : ''].filter(Boolean);
      if (autoStops.length) rows.push(['Auto-stop', autoStops.join('; ') + (p.pre_stop_command ? `; first runs: ${p.pre_stop_command}` : '')]);
      if (p.terminate_after_stopped_s) rows.push(['Auto-terminate', `once left stopped for ${duration(p.terminate_after_stopped_s)}`]);
      if (p.state === 'stopped' && p.volume_gb > 0) {
        rows.push(['While stopped', `the ${p.volume_gb} GB volume costs ${money(p.storage_price_per_month_micros)} a month until terminated`]);
      }
      holder.replaceChildren(
        h('dl', {class: 'detail'}, rows.map(([label, value]) => [h('dt', {}, label), h('dd', {}, value)])),
        h('h2', {}, 'Connect'), connections(p),
        h('div', {class: 'actions'}, (p.actions || []).map((action) =>
          h('button', {type: 'button', class: action === 'terminate' ? 'danger' : undefined, onclick: () => act(action)}, action))));
      if (p.state === 'running') {
        // Follows the end, as `tail -f` does, unless the reader has scrolled up to read.
        const following = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
        logs.textContent = await api('GET', `/v1/pods/${id}/logs?tail=200`).catch((error) => error.message);
        if (following) logs.scrollTop = logs.scrollHeight;
      } else if (['stopped', 'exited', 'failed'].includes(p.state) && logsOf !== p.state_since) {
        // Its container is gone; the server kept the end of its output: read once per stop.
        logsOf = p.state_since;
        logs.textContent = '';
        logs.textContent = await api('GET', `/v1/pods/${id}/logs?tail=200`).catch((error) => error.message);
        logs.scrollTop = logs.scrollHeight;
      }
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  });
  return [title('Pod ' + id), holder, status, h('h2', {}, 'Logs'), logs];
}

// --- Billing --------------------------------------------------------------------------------------

// The monthly budget: what this UTC month has cost so far (the usage by day, as the server's budget
// counts it: charges and what runs now) against it, and what happens at 100 %.
function budgetCard(me, byDay, status) {
  const month = new Date().toISOString().slice(0, 7);
  const spent = byDay.usage.filter((r) => r.key.startsWith(month)).reduce((sum, r) => sum + r.total_micros, 0);
  const budget = me.monthly_budget_micros || 0;
  const percent = budget ? Math.floor((spent / budget) * 100) : 0;
  const amount = h('input', {id: 'budget', type: 'number', min: 0, step: '0.01', placeholder: 'none', value: budget ? budget / 1e6 : ''});
  const action = h('select', {id: 'budget-action'}, [['notify', 'only tell me'], ['stop_interruptible', 'stop my interruptible pods'],
    ['stop_all', 'stop all my pods']].map(([value, text]) => h('option', {value, selected: value === me.budget_action ? '' : undefined}, text)));
  const form = h('form', {class: 'inline', onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api('PUT', '/v1/users/me/budget', {monthly_budget_micros: Math.round(Number(amount.value || 0) * 1e6), action: action.value});
      route();
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  }}, amount, h('span', {}, '$ a month; at 100 % '), action, h('button', {type: 'submit'}, 'Set budget'));
  return [h('dt', {}, h('label', {for: 'budget'}, 'Monthly budget')), h('dd', {},
    budget ? h('p', {id: 'budget-progress'}, h('progress', {max: budget, value: Math.min(spent, budget), 'aria-label': 'budget used'}),
      ` ${money(spent)} of ${money(budget)} this month (${percent} %): warned at 80 %, at 100 % ${action.selectedOptions[0].textContent}.`) : '',
    form, h('p', {class: 'hint'}, "Your pods' cost in this UTC calendar month, projects you own included. 0 or empty: no budget."))];
}

async function billing() {
  const [balance, byPod, byDay, me] = await Promise.all([
    api('GET', '/v1/billing/balance'), api('GET', '/v1/billing/usage?by=pod'), api('GET', '/v1/billing/usage?by=day'),
    api('GET', '/v1/users/me')]);
  const usage = (rows, what) => table([
    {title: what, cell: (r) => r.key}, {title: 'GPU time', numeric: true, cell: (r) => gpuTime(r.gpu_seconds)},
    {title: 'GPU', numeric: true, cell: (r) => moneyCell(r.gpu_micros)}, {title: 'Storage', numeric: true, cell: (r) => moneyCell(r.storage_micros)},
    {title: 'Total', numeric: true, cell: (r) => moneyCell(r.total_micros)}], rows, {class: 'usage'});
  // What runs now is counted as the balance counts it (servers before that send no unbilled_micros).
  const running = byPod.usage.reduce((sum, r) => sum + (r.unbilled_micros || 0), 0);
  const runningNote = running > 0 ? h('p', {class: 'hint', id: 'usage-running'},
    `Includes ${money(running)} run up since the last charge by what runs now: the balance counts it too.`) : '';
  const download = async () => {
    const csv = await api('GET', '/v1/billing/usage?by=day&format=csv');
    const link = h('a', {href: URL.createObjectURL(new Blob([csv], {type: 'text/csv'})), download: 'suanli-usage.csv'});
    link.click();
    URL.revokeObjectURL(link.href);
  };
  // The spend cap: the most this user's pods may cost per hour together; 0 (or empty) removes it.
  const status = h('div', {role: 'status'});
  const cap = h('input', {id: 'spend-cap', type: 'number', min: 0, step: '0.01', placeholder: 'none',
    value: balance.spend_cap_per_hour_micros ? balance.spend_cap_per_hour_micros / 1e6 : ''});
  const capForm = h('form', {class: 'inline', onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api('PATCH', '/v1/users/me', {spend_cap_per_hour_micros: Math.round(Number(cap.value || 0) * 1e6)});
      route();
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  }}, cap, h('span', {}, '$/h '), h('button', {type: 'submit'}, 'Set cap'));
  const dollars = (rows, key) => rows.map((r) => r[key] / 1e6);
  const days = [...byDay.usage].sort((a, b) => a.key.localeCompare(b.key));
  const spendChart = days.length ? chart('spend-chart', 'Spend per day (GPU and storage, stacked)', {
    type: 'bar',
    data: {labels: days.map((r) => r.key), datasets: [
      {label: 'GPU', data: dollars(days, 'gpu_micros'), backgroundColor: PALETTE.accent},
      {label: 'Storage', data: dollars(days, 'storage_micros'), backgroundColor: PALETTE.storage}]},
    options: {scales: {x: {stacked: true}, y: {stacked: true, beginAtZero: true, title: axisTitle('dollars'),
                                                ticks: {callback: (value) => money(Math.round(value * 1e6))}}},
      plugins: {tooltip: {callbacks: {label: (item) => `${item.dataset.label}: ${money(Math.round(item.raw * 1e6))}`}}}},
  }, 240) : '';
  return [title('Billing'),
    h('dl', {class: 'detail'},
      h('dt', {}, 'Balance'), h('dd', {id: 'balance', title: exactMoney(balance.balance_micros)}, money(balance.balance_micros)),
      h('dt', {}, 'Spending now'), h('dd', {}, money(balance.spend_rate_per_hour_micros) + '/h'),
      h('dt', {}, 'Runway'), h('dd', {}, balance.runway_s === null ? 'nothing is charged now' : roughDuration(balance.runway_s)),
      h('dt', {}, h('label', {for: 'spend-cap'}, 'Spend cap')), h('dd', {}, capForm,
        h('p', {class: 'hint'}, 'The most your pods may cost per hour together: a new pod over it is refused, and a lower cap stops the newest pods until the rest fit. 0 or empty: no cap.')),
      ...budgetCard(me, byDay, status)),
    status,
    h('h2', {}, 'Per day'), runningNote, spendChart, byDay.usage.length ? usage(byDay.usage, 'Day') : h('p', {}, 'Nothing charged yet.'),
    h('h2', {}, 'Per pod'), byPod.usage.length ? usage(byPod.usage, 'Pod') : h('p', {}, 'Nothing charged yet.'),
    h('button', {type: 'button', onclick: download}, 'Export CSV')];
}

// --- Admin ----------------------------------------------------------------------------------------

async function admin() {
  const [{nodes}, {users}, {pods: all}, {gpus: catalog}] = await Promise.all([
    api('GET', '/v1/nodes'), api('GET', '/v1/users'), everyPage('/v1/pods', 'pods'), api('GET', '/v1/gpus')]);
  const status = h('div', {role: 'status'});
  const attempt = async (work) => {
    try {
      await work();
      route();  // show the new state
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  const allocated = (node) => all.filter((p) => p.node_id === node.id)
    .reduce((sum, p) => sum + (p.gpu_indices || []).length, 0);
  const health = (node) => (node.gpu_health || []).map((g) => g.problem
    ? `GPU ${g.index}: ${g.problem}`
    : `GPU ${g.index}: ${g.utilization_percent ?? '-'}% ${g.temperature_c ?? '-'}C` + (g.xid_errors ? ` ${g.xid_errors} XID` : ''))
    .join('; ') || (node.gpus.some((g) => g.simulated) ? 'simulated: no readings' : '-');
  const nodeState = (node) => [node.state, node.draining ? 'draining' : node.cordoned ? 'cordoned' : '',
    node.drain_reason].filter(Boolean).join(', ');
  const nodeActions = (node) => h('span', {class: 'actions'},
    (node.cordoned ? ['uncordon'] : ['cordon', 'drain']).map((action) => h('button', {type: 'button',
      onclick: () => attempt(() => api('POST', `/v1/nodes/${node.id}/${action}`, {}))}, action)));
  const gpuText = (node) => {
    const types = {};
    for (const g of node.gpus) types[g.type + (g.simulated ? ' (simulated)' : '')] = (types[g.type + (g.simulated ? ' (simulated)' : '')] || 0) + 1;
    return Object.entries(types).map(([type, n]) => `${n}x ${type}`).join(', ') || 'none';
  };

  const amount = h('input', {id: 'credit-amount', type: 'number', step: '0.01', placeholder: 'dollars', 'aria-label': 'credit in dollars'});
  const who = h('select', {id: 'credit-user', 'aria-label': 'user to credit'}, users.map((u) => h('option', {value: u.id}, u.name)));
  const credit = h('form', {class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    attempt(() => api('POST', `/v1/users/${who.value}/credits`, {amount_micros: Math.round(Number(amount.value) * 1e6)}));
  }}, who, amount, h('button', {type: 'submit'}, 'Add credit'));

  // A new renter: name and first credit; their first API token is shown once, to hand over.
  const newName = h('input', {id: 'new-user-name', required: true, maxlength: 64, placeholder: 'name', 'aria-label': 'new user name'});
  const newCredits = h('input', {id: 'new-user-credits', type: 'number', step: '0.01', min: 0, placeholder: 'credit $', 'aria-label': 'first credit in dollars'});
  const newOut = h('div', {'aria-live': 'polite'});
  const newUser = h('form', {class: 'inline', onsubmit: async (event) => {
    event.preventDefault();
    try {
      const made = await api('POST', '/v1/users', {name: newName.value.trim(), credits_micros: Math.round(Number(newCredits.value || 0) * 1e6)});
      users.push(made.user);
      usersTable.replaceWith(usersTable = usersOf(users));
      who.append(h('option', {value: made.user.id}, made.user.name));
      newOut.replaceChildren(h('p', {}, `${made.user.name}'s API token (shown once: hand it over; they sign in with it):`),
        h('pre', {class: 'command', id: 'new-user-token'}, made.token));
      newName.value = newCredits.value = '';
    } catch (error) {
      newOut.replaceChildren(errorBox(error));
    }
  }}, newName, newCredits, h('button', {type: 'submit'}, 'Create user'));
  const usersOf = (list) => table([{title: 'User', cell: (u) => u.name}, {title: 'Role', cell: (u) => u.role},
    {title: 'Balance', numeric: true, cell: (u) => money(u.balance_micros)}], list, {class: 'users'});
  let usersTable = usersOf(users);

  const joinOut = h('div', {'aria-live': 'polite'});
  const join = h('button', {type: 'button', id: 'create-join-token', onclick: async () => {
    try {
      const created = await api('POST', '/v1/join-tokens', {note: 'from the console'});
      joinOut.replaceChildren(h('p', {}, 'On the GPU host (shown once; valid 24 h):'),
        h('pre', {class: 'command'}, `suanli agent --server ${location.origin} --join-token ${created.secret}`));
    } catch (error) {
      joinOut.replaceChildren(errorBox(error));
    }
  }}, 'Create a join token');

  const priceGpu = h('select', {id: 'price-gpu', 'aria-label': 'GPU type'}, catalog.map((g) => h('option', {value: g.name}, g.name)));
  const priceValue = h('input', {id: 'price-value', type: 'number', step: '0.01', min: '0.01', placeholder: '$ per GPU-hour', 'aria-label': 'price per GPU-hour in dollars'});
  const price = h('form', {class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    attempt(() => api('PUT', `/v1/prices/${encodeURIComponent(priceGpu.value)}`, {price_per_hour_micros: Math.round(Number(priceValue.value) * 1e6)}));
  }}, priceGpu, priceValue, h('button', {type: 'submit'}, 'Set price'));

  return [title('Admin'), status,
    h('h2', {}, 'Nodes'),
    nodes.length ? table([
      {title: 'Node', cell: (n) => n.name}, {title: 'State', cell: nodeState}, {title: 'Address', cell: (n) => n.address || '-'},
      {title: 'GPUs', cell: gpuText}, {title: 'In use', numeric: true, cell: (n) => `${allocated(n)} of ${n.gpus.length}`},
      {title: 'Health', cell: health}, {title: 'Last heartbeat', cell: (n) => n.last_heartbeat.replace('T', ' ').slice(0, 19)},
      {title: '', cell: nodeActions}], nodes, {class: 'nodes'}) : h('p', {}, 'No nodes yet: create a join token below.'),
    join, joinOut,
    h('h2', {}, 'Users'), usersTable, credit, newUser, newOut,
    h('h2', {}, 'Prices'), h('p', {class: 'hint'}, 'What renters pay per GPU-hour; the GPUs page shows the current ones.'), price];
}

// --- Events ---------------------------------------------------------------------------------------

// The newest events of the user's pods and account (an admin's: all), polled every 5 s; a kind
// filter. Pods link to their page.
function events() {
  const kind = h('select', {id: 'event-kind'}, ['', 'pod.state', 'pod.idle_warning', 'pod.idle_stop', 'pod.runtime_warning', 'pod.runtime_stop',
    'pod.preempted', 'pod.balance_stop', 'pod.spend_cap_stop', 'pod.node_drained', 'balance.low', 'node.unreachable', 'node.drained',
    'volume.moved', 'volume.snapshot_ready', 'volume.snapshot_failed', 'volume.restored']
    .map((k) => h('option', {value: k}, k || 'all kinds')));
  const holder = h('div', {'aria-live': 'polite'});
  const show = async () => {
    const query = kind.value ? `&kind=${encodeURIComponent(kind.value)}` : '';
    const answer = await api('GET', `/v1/events?tail=100${query}`).catch((error) => ({error}));
    if (answer.error) { holder.replaceChildren(errorBox(answer.error)); return; }
    const newest = [...answer.events].reverse();
    const object = (e) => e.object_id.startsWith('pod_') ? h('a', {href: '#/pods/' + e.object_id}, e.object_id) : (e.object_id || '-');
    holder.replaceChildren(newest.length ? table([
      {title: 'Time', cell: (e) => e.time.replace('T', ' ').slice(0, 19)}, {title: 'Kind', cell: (e) => h('span', {class: 'event-kind'}, e.kind)},
      {title: 'Object', cell: object}, {title: 'What happened', cell: (e) => e.message}], newest, {class: 'events'})
      : h('p', {}, kind.value ? `No ${kind.value} events.` : 'No events yet: they come when your pods change state, are stopped for you, or your balance runs low.'));
  };
  kind.addEventListener('input', show);
  poll(5000, show);
  return [title('Events'), h('p', {class: 'hint'}, 'Newest first. The same list: suanli events (-f follows).'),
    h('label', {for: 'event-kind'}, 'Kind '), kind, holder];
}

// --- Projects -------------------------------------------------------------------------------------

// The projects the signed-in person is a member of, as the switcher in the bar lists them.
let knownProjects = [];
function currentProject() {
  const id = localStorage.getItem(PROJECT_KEY) || '';
  return knownProjects.some((p) => p.id === id) ? id : '';
}
function projectName(id) { return (knownProjects.find((p) => p.id === id) || {name: id}).name; }

async function refreshProjects() {
  knownProjects = (await api('GET', '/v1/projects').catch(() => ({projects: []}))).projects;
  const switcher = document.getElementById('project-switcher');
  const chosen = currentProject();
  switcher.replaceChildren(h('option', {value: ''}, 'Just me'),
    ...knownProjects.map((p) => h('option', {value: p.id, selected: p.id === chosen ? '' : undefined}, `Project ${p.name}`)));
}

async function projects() {
  const me = (await api('GET', '/v1/users/me')).id;
  const out = h('div', {'aria-live': 'polite'});
  const list = h('div', {'aria-live': 'polite'});
  const act = async (call) => {
    try { await call(); out.replaceChildren(); await refreshProjects(); show(); } catch (error) { out.replaceChildren(errorBox(error)); }
  };
  // A project's own limits, inside its owner's: empty fields are left as they are, 0 removes one.
  const limitsOf = h('select', {id: 'limits-project', 'aria-label': 'project'});
  const cap = h('input', {id: 'limits-cap', type: 'number', min: 0, step: '0.01', placeholder: 'as it is', 'aria-label': 'cap in dollars per hour'});
  const monthly = h('input', {id: 'limits-monthly', type: 'number', min: 0, step: '0.01', placeholder: 'as it is', 'aria-label': 'monthly budget in dollars'});
  const action = h('select', {id: 'limits-action', 'aria-label': 'at 100 % of the budget'}, h('option', {value: ''}, 'action as it is'),
    ...[['notify', 'only tell me'], ['stop_interruptible', 'stop its interruptible pods'], ['stop_all', 'stop all its pods']]
      .map(([value, text]) => h('option', {value}, text)));
  const limits = h('form', {class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    const body = {};
    if (cap.value !== '') body.spend_cap_per_hour_micros = Math.round(Number(cap.value) * 1e6);
    if (monthly.value !== '') body.monthly_budget_micros = Math.round(Number(monthly.value) * 1e6);
    if (action.value) body.action = action.value;
    act(() => api('PUT', `/v1/projects/${limitsOf.value}/budget`, body));
  }}, limitsOf, h('label', {}, 'cap ', cap, ' $/h'), h('label', {}, 'budget ', monthly, ' $ a month'), action,
  h('button', {type: 'submit'}, 'Set limits'));
  const limitsSection = h('div', {});
  const show = () => {
    const owned = knownProjects.filter((p) => p.owner_id === me);
    const chosen = limitsOf.value;
    limitsOf.replaceChildren(...owned.map((p) => h('option', {value: p.id, selected: p.id === chosen ? '' : undefined}, p.name)));
    limitsSection.replaceChildren(...(owned.length ? [h('h2', {}, "A project's limits"), limits, h('p', {class: 'hint'},
      "Inside your own: a cap on what its pods cost per hour together (a pod past it is refused), and a monthly budget over its pods, warned at 80 %.")] : []));
    list.replaceChildren(knownProjects.length === 0
      ? h('p', {}, 'No projects yet: create one, add your team as members, and deploy into it (the switcher in the bar).')
      : table([
        {title: 'Project', cell: (p) => p.name},
        {title: 'Members', cell: (p) => p.members.map((m) => `${m.user_id === me ? 'you' : m.user_id} (${m.role})`).join(', ')},
        {title: 'Limits', cell: (p) => [p.spend_cap_per_hour_micros ? `cap ${money(p.spend_cap_per_hour_micros)}/h` : '',
          p.monthly_budget_micros ? `${money(p.monthly_budget_micros)} a month (at 100 %: ${p.budget_action.replace('_', ' ')})` : '']
          .filter(Boolean).join(' · ') || 'none'},
        {title: 'Add a member', cell: (p) => (p.owner_id !== me ? '-' : (() => {
          const user = h('input', {'aria-label': `user to add to ${p.name}`, placeholder: 'user name or ID', required: true});
          const role = h('select', {'aria-label': `role in ${p.name}`}, h('option', {value: 'member'}, 'member'), h('option', {value: 'viewer'}, 'viewer'));
          return h('form', {class: 'inline', onsubmit: (event) => {
            event.preventDefault();
            act(() => api('PUT', `/v1/projects/${p.id}/members/${encodeURIComponent(user.value.trim())}`, {role: role.value}));
          }}, user, role, h('button', {type: 'submit'}, 'Add'));
        })())},
        {title: '', cell: (p) => (p.owner_id === me
          ? h('button', {type: 'button', onclick: () => act(() => api('DELETE', '/v1/projects/' + p.id))}, 'Delete')
          : h('button', {type: 'button', onclick: () => act(() => api('DELETE', `/v1/projects/${p.id}/members/${me}`))}, 'Leave'))},
      ], knownProjects, {class: 'projects'}));
  };
  await refreshProjects();
  show();
  const name = h('input', {id: 'project-name', required: true, maxlength: 64, placeholder: 'name', 'aria-label': 'project name'});
  const create = h('form', {class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    act(async () => { await api('POST', '/v1/projects', {name: name.value.trim()}); name.value = ''; });
  }}, name, h('button', {type: 'submit'}, 'Create project'));
  return [title('Projects'), h('p', {class: 'hint'},
    "A project's pods, volumes and endpoints are seen by its members and viewers, run by its members, and billed to its owner. The same: suanli projects."),
  list, h('h2', {}, 'New project'), create, limitsSection, out];
}

// --- Routing --------------------------------------------------------------------------------------

const routes = [
  [/^#\/gpus$/, gpus], [/^#\/advisor$/, advisor], [/^#\/deploy(?:\?(.*))?$/, deploy], [/^#\/pods$/, pods], [/^#\/pods\/([\w-]+)$/, pod], [/^#\/endpoints$/, endpoints], [/^#\/volumes$/, volumes], [/^#\/projects$/, projects], [/^#\/billing$/, billing], [/^#\/events$/, events], [/^#\/admin$/, admin],
];

async function route() {
  const generation = ++viewGeneration;  // stops the polling of the view shown until now
  destroyCharts();
  const signedIn = token() !== '';
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('admin-link').hidden = localStorage.getItem(ROLE_KEY) !== 'admin';
  if (!signedIn || location.hash === '#/sign-in') {
    if (signedIn) { location.hash = '#/gpus'; return; }
    view.replaceChildren(...signIn());
    return;
  }
  await refreshProjects();
  const [pattern, build] = routes.find(([p]) => p.test(location.hash)) || [null, null];
  if (!build) { location.hash = '#/gpus'; return; }
  for (const link of document.querySelectorAll('#nav a')) {
    link.toggleAttribute('aria-current', location.hash.startsWith(link.getAttribute('href')));
  }
  let shown;
  try {
    shown = [await build(...location.hash.match(pattern).slice(1))].flat();
  } catch (error) {
    shown = [title('Something went wrong'), errorBox(error)];
  }
  if (generation !== viewGeneration) return;  // another view was asked for meanwhile
  view.replaceChildren(...shown);
  view.focus();
}

document.getElementById('sign-out').addEventListener('click', () => signOut());
document.getElementById('project-switcher').addEventListener('change', (event) => {
  localStorage.setItem(PROJECT_KEY, event.target.value);
  route();
});
window.addEventListener('hashchange', route);
route();
