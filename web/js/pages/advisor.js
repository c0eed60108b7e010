// The advisor's page: a workload, estimated on this cloud's GPU types (or the whole market), the
// pick with its reason, buy or rent, charts of cost and time, and the ranked table.
import {api} from '../api.js';
import {PALETTE, axisTitle, chart, destroyCharts} from '../charts.js';
import {errorBox, h, table, title} from '../dom.js';
import {gpusText, hours, rate} from '../format.js';

const TASKS = ['serve', 'infer', 'lora', 'qlora', 'finetune', 'train'];
const TRAINING = ['lora', 'qlora', 'finetune', 'train'];
const HF_CONFIG = ''; // the model select's value for "paste a Hugging Face config.json"
const WORK_FIELDS = ['tokens', 'samples', 'epochs', 'requests', 'images'];
const advisorState = {
  market: false,
  model: 'llama-3-8b',
  hfConfig: '',
  task: 'lora',
  precision: 'bf16',
  quant: '',
  batch: '',
  seq: '',
  tokens: '',
  samples: '',
  epochs: '',
  requests: '',
  images: '',
};

// The amounts of work the advisor takes for a kind of model and task (as src/advisor/workload.cc
// checks them), each with its label: a diffusion model makes images, an LLM serving answers
// requests. Any other amount would be refused, so its field is not shown.
export function workFields(kind, task) {
  const training = TRAINING.includes(task);
  switch (kind) {
    case 'diffusion':
      return {images: 'Images to generate', requests: 'or requests (one image each)'};
    case 'vision':
      return training
        ? {samples: 'Images per epoch', epochs: 'Epochs'}
        : {images: 'Images to classify'};
    case 'encoder':
      return training
        ? {tokens: 'Tokens to train on', samples: 'or samples per epoch', epochs: 'Epochs'}
        : {samples: 'Sequences to encode', requests: 'or requests'};
    default:
      return training
        ? {tokens: 'Tokens to train on', samples: 'or samples per epoch', epochs: 'Epochs'}
        : {tokens: 'Tokens to generate', requests: 'or requests to answer'};
  }
}

// What the estimate was made for, from the answer's workload: "5,000 images", or a default amount.
export function workText(workload) {
  const w = workload.work || {};
  const count = (n) => Math.round(n).toLocaleString('en-US');
  const parts = [
    w.tokens && `${count(w.tokens)} tokens`,
    w.samples && `${count(w.samples)} samples` + (w.epochs > 1 ? ` × ${w.epochs} epochs` : ''),
    w.requests && `${count(w.requests)} requests`,
    w.images && `${count(w.images)} images`,
  ].filter(Boolean);
  return (
    (parts.join(', ') || 'a default amount of work') +
    (w.assumed ? ' (assumed: give an amount for your job)' : '')
  );
}

export async function advisor() {
  const {models} = await api('GET', '/v1/models');
  const field = (id, label, input) =>
    h('div', {class: 'field'}, h('label', {for: id}, label), input);
  const size = (b) => (b >= 1 ? b.toFixed(1) + 'B' : Math.round(b * 1000) + 'M');
  const choose = (id, values, current, text = (v) => v) =>
    h(
      'select',
      {id},
      values.map((v) => h('option', {value: v, selected: v === current}, text(v))),
    );
  const model = h(
    'select',
    {id: 'model'},
    models.map((m) =>
      h(
        'option',
        {value: m.name, selected: m.name === advisorState.model},
        `${m.name} (${size(m.params_b)})`,
      ),
    ),
    h(
      'option',
      {value: HF_CONFIG, selected: advisorState.model === HF_CONFIG},
      'Another model: its Hugging Face config.json',
    ),
  );
  // A model the zoo lacks: the config.json from its Hugging Face page, pasted or loaded from a
  // file.
  const hfConfig = h(
    'textarea',
    {
      id: 'hf-config',
      rows: 6,
      spellcheck: 'false',
      placeholder: '{"model_type": "llama", "hidden_size": 4096, ...}',
    },
    advisorState.hfConfig,
  );
  const hfFile = h('input', {
    type: 'file',
    accept: '.json,application/json',
    'aria-label': 'load config.json from a file',
    onchange: async (event) => {
      if (event.target.files[0]) hfConfig.value = await event.target.files[0].text();
    },
  });
  const hfBox = h(
    'div',
    {class: 'hf-config wide'},
    h('label', {for: 'hf-config'}, 'config.json'),
    hfConfig,
    hfFile,
  );
  const task = choose('task', TASKS, advisorState.task);
  const precision = choose('precision', ['bf16', 'fp16', 'fp32', 'fp8'], advisorState.precision);
  const quant = choose(
    'quant',
    ['', 'int8', 'int4', 'q4_0', 'q8_0'],
    advisorState.quant,
    (q) => q || 'none',
  );
  const number = (id, placeholder) =>
    h('input', {id, type: 'number', min: 1, placeholder, value: advisorState[id]});
  const batch = number('batch', "the task's default");
  const seq = number('seq', "the model's default");
  const work = Object.fromEntries(
    WORK_FIELDS.map((id) => [id, number(id, id === 'epochs' ? '1' : 'a default amount')]),
  );
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
    for (const option of task.options)
      option.disabled = kind === 'diffusion' && TRAINING.includes(option.value);
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
  const form = h(
    'form',
    {
      class: 'card advisor-form',
      onsubmit: async (event) => {
        event.preventDefault();
        Object.assign(
          advisorState,
          {
            market: market.checked,
            model: model.value,
            hfConfig: hfConfig.value,
            task: task.value,
            precision: precision.value,
            quant: quant.value,
            batch: batch.value,
            seq: seq.value,
          },
          Object.fromEntries(WORK_FIELDS.map((id) => [id, work[id].value])),
        );
        const workload = {task: task.value, precision: precision.value};
        if (model.value !== HF_CONFIG) {
          workload.model = model.value;
        } else {
          try {
            workload.hf_config = JSON.parse(hfConfig.value);
          } catch (error) {
            answer.replaceChildren(
              errorBox(
                new Error(`config.json is not JSON (${error.message}): paste the whole file.`),
              ),
            );
            return;
          }
        }
        if (quant.value) workload.quant = quant.value;
        if (batch.value) workload.batch = Number(batch.value);
        if (seq.value) workload.seq = Number(seq.value);
        for (const id of WORK_FIELDS) if (work[id].value) workload[id] = Number(work[id].value);
        answer.replaceChildren(h('p', {class: 'hint'}, 'Estimating...'));
        try {
          const advised = await api('POST', '/v1/advise', {
            workload,
            scope: market.checked ? 'market' : 'cluster',
          });
          destroyCharts(); // the previous answer's
          answer.replaceChildren(...advice(advised));
        } catch (error) {
          answer.replaceChildren(errorBox(error));
        }
        // The answer comes below a tall form: bring it into view rather than leave it below the
        // fold.
        answer.scrollIntoView({block: 'start'});
        answer.focus({preventScroll: true});
      },
    },
    field('model', 'Model', model),
    hfBox,
    field('task', 'Task', task),
    field('precision', 'Precision', precision),
    field('quant', 'Quantisation', quant),
    field('batch', 'Batch', batch),
    seqBox,
    h(
      'p',
      {class: 'hint wide'},
      'Amount of work: one of these (empty: a default amount). They are cleared when the ' +
        'model changes.',
    ),
    WORK_FIELDS.map((id) => workBoxes[id]),
    h(
      'label',
      {class: 'check wide'},
      market,
      ' The whole market: every GPU type, not only those this cloud has',
    ),
    h('div', {class: 'wide'}, h('button', {type: 'submit'}, 'Advise')),
  );
  return [title('Which GPU?'), form, answer];
}

// Buy or rent, for the pick: the hours of use after which buying beats renting here (the advisor
// counts the GPUs' power), as hours a day over a year, which is how people think about a purchase.
function buyOrRent(estimate) {
  if (!estimate || !estimate.break_even_hours) return '';
  const perDay = estimate.break_even_hours / 365;
  const verdict =
    perDay > 24
      ? 'so renting wins: even around the clock a year is not enough'
      : `so buy only if you will keep ${estimate.count > 1 ? 'them' : 'it'} busy more than ` +
        `${perDay.toFixed(1)} hours a day for a year`;
  return h(
    'p',
    {id: 'buy-or-rent'},
    h('strong', {}, 'Buy or rent? '),
    `Buying ${gpusText(estimate.gpu, estimate.count)} costs about ` +
      `$${Math.round(estimate.buy_usd).toLocaleString('en-US')}; `,
    `renting here costs $${estimate.rent_usd_per_hour.toFixed(2)}/h and this job ` +
      `$${estimate.cost_usd.toFixed(2)}. `,
    `Buying pays off after ${Math.round(estimate.break_even_hours).toLocaleString('en-US')} ` +
      `hours of use, ${verdict}.`,
  );
}

// Time and cost of the job on each GPU type that fits, in the advisor's order (best first): two
// charts side by side, each with one scale, rather than two scales on one chart that read as one.
function adviceCharts(fitting) {
  const shown = fitting.slice(0, 15);
  const labels = shown.map((e) => gpusText(e.gpu, e.count));
  const inHours = Math.max(...shown.map((e) => e.time_s)) >= 3600;
  const bars = (id, what, axis, data, color, text) =>
    chart(
      id,
      `${what} of the job on the ${shown.length} best GPU types that fit`,
      {
        type: 'bar',
        data: {labels, datasets: [{label: what, data, backgroundColor: color}]},
        options: {
          indexAxis: 'y',
          scales: {x: {beginAtZero: true, title: axisTitle(axis)}},
          plugins: {
            legend: {display: false},
            tooltip: {callbacks: {label: (item) => text(item.raw)}},
          },
        },
      },
      90 + 30 * shown.length,
    );
  return h(
    'div',
    {class: 'chart-pair'},
    bars(
      'advice-cost-chart',
      'Cost',
      'dollars',
      shown.map((e) => e.cost_usd),
      PALETTE.highlight,
      (v) => '$' + v.toFixed(2),
    ),
    bars(
      'advice-time-chart',
      'Time',
      inHours ? 'hours' : 'minutes',
      shown.map((e) => e.time_s / (inHours ? 3600 : 60)),
      PALETTE.accent,
      (v) => hours(v * (inHours ? 3600 : 60)),
    ),
  );
}

// Types whose agents ran suanli-gpu-probe are predicted from what their GPUs measured (a card
// slower than a healthy one of its model is predicted slower), the rest from their datasheets.
function measuredNote(estimates) {
  const measured = [
    ...new Map(estimates.filter((e) => e.measured).map((e) => [e.gpu, e.measured])).entries(),
  ];
  if (!measured.length) return '';
  const said = measured.map(
    ([gpu, m]) =>
      `${gpu} (${m.gpus} GPU${m.gpus > 1 ? 's' : ''}: ` +
      `memory at ${Math.round(m.bandwidth_scale * 100)} %, ` +
      `tensor at ${Math.round(m.compute_scale * 100)} % of a healthy card)`,
  );
  return h(
    'p',
    {class: 'hint', id: 'advice-measured'},
    `Predicted from what this cloud's GPUs measured, not their datasheets: ${said.join('; ')}.`,
  );
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
  const band = (text) =>
    error && text !== '-'
      ? h(
          'span',
          {},
          text,
          h('span', {class: 'hint band'}, ` ±${Math.round(error.median_percent)}%`),
        )
      : text;
  return [
    h(
      'section',
      {class: 'card recommendation', 'aria-label': 'recommendation'},
      h('h2', {}, pick.gpu ? `Pick ${gpusText(pick.gpu, pick.count)}` : 'Nothing fits'),
      h('p', {}, pick.reason),
      h(
        'p',
        {class: 'hint', id: 'advice-scope'},
        cluster
          ? `Ranked on this cloud's GPU types (${answer.estimates.length}); tick "the whole ` +
              `market" to see every type.`
          : answer.scope_note
            ? `Every GPU type in the catalog: ${answer.scope_note}.`
            : "Every GPU type in the catalog, this cloud's or not.",
      ),
      h(
        'p',
        {class: 'hint', id: 'advice-work'},
        `${answer.workload.model}, ${answer.workload.task}: ${workText(answer.workload)}.`,
      ),
      h(
        'p',
        {class: 'hint', id: 'advice-error'},
        error
          ? `Speed, time and cost are typically within ±${error.median_percent.toFixed(1)} %: ` +
              'the median error of these predictions ' +
              `(${error.kind.replaceAll('_', ' ')}) on ${error.rows} published measurements ` +
              'from sources the advisor was not fitted on.'
          : 'No published measurements of this kind of work to check the predictions ' +
              'against: treat speed, time and cost as rough.',
      ),
      measuredNote(answer.estimates),
      buyOrRent(chosen),
      deployable
        ? h(
            'a',
            {
              class: 'button',
              href: `#/deploy?gpu=${encodeURIComponent(pick.gpu)}&count=${pick.count}`,
            },
            'Deploy this',
          )
        : pick.gpu
          ? h(
              'p',
              {class: 'hint'},
              `This cloud has no ${gpusText(pick.gpu, pick.count)} to deploy on.`,
            )
          : '',
    ),
    fitting.length ? adviceCharts(fitting) : '',
    h(
      'h2',
      {},
      `${cluster ? "This cloud's GPU types" : 'Every GPU type'} (${fitting.length} of ` +
        `${answer.estimates.length} fit)`,
    ),
    table(
      [
        {
          title: 'GPU',
          cell: (e) =>
            e.measured
              ? h('span', {}, gpusText(e.gpu, e.count), h('span', {class: 'hint'}, ' measured'))
              : gpusText(e.gpu, e.count),
        },
        {
          title: 'Here',
          numeric: true,
          cell: (e) => (e.cluster_gpus ? `${e.free_now} of ${e.cluster_gpus} free` : '-'),
        },
        {title: 'Fits', cell: (e) => (e.fits ? 'yes' : 'no: ' + e.reason)},
        {
          title: 'Memory GB per GPU',
          numeric: true,
          cell: (e) =>
            `${(e.memory_gb.total ?? 0).toFixed(1)} of ${(e.memory_gb.available ?? 0).toFixed(0)}`,
        },
        {title: 'Speed', numeric: true, cell: (e) => band(rate(e))},
        {title: 'Time', numeric: true, cell: (e) => (e.fits ? band(hours(e.time_s)) : '-')},
        {
          title: 'Cost',
          numeric: true,
          cell: (e) => (e.fits ? band('$' + e.cost_usd.toFixed(2)) : '-'),
        },
        {title: '$/h', numeric: true, cell: (e) => '$' + e.rent_usd_per_hour.toFixed(2)},
        {
          title: 'Buying pays off after',
          numeric: true,
          cell: (e) => (e.break_even_hours ? hours(e.break_even_hours * 3600) + ' of use' : '-'),
        },
      ],
      answer.estimates,
      {class: 'advice'},
    ),
  ];
}
