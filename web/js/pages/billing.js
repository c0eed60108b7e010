// Billing: balance, runway, the spend cap and the monthly budget, spend per day, usage, CSV export.
import {api} from '../api.js';
import {PALETTE, axisTitle, chart} from '../charts.js';
import {errorBox, h, moneyCell, table, title} from '../dom.js';
import {exactMoney, gpuTime, money, roughDuration} from '../format.js';
import {route} from '../view.js';

// The monthly budget: what this UTC month has cost so far (the usage by day, as the server's budget
// counts it: charges and what runs now) against it, and what happens at 100 %.
function budgetCard(me, byDay, status) {
  const month = new Date().toISOString().slice(0, 7);
  const spent = byDay.usage
    .filter((r) => r.key.startsWith(month))
    .reduce((sum, r) => sum + r.total_micros, 0);
  const budget = me.monthly_budget_micros || 0;
  const percent = budget ? Math.floor((spent / budget) * 100) : 0;
  const amount = h('input', {
    id: 'budget',
    type: 'number',
    min: 0,
    step: '0.01',
    placeholder: 'none',
    value: budget ? budget / 1e6 : '',
  });
  const action = h(
    'select',
    {id: 'budget-action'},
    [
      ['notify', 'only tell me'],
      ['stop_interruptible', 'stop my interruptible pods'],
      ['stop_all', 'stop all my pods'],
    ].map(([value, text]) =>
      h('option', {value, selected: value === me.budget_action ? '' : undefined}, text),
    ),
  );
  const form = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await api('PUT', '/v1/users/me/budget', {
            monthly_budget_micros: Math.round(Number(amount.value || 0) * 1e6),
            action: action.value,
          });
          route();
        } catch (error) {
          status.replaceChildren(errorBox(error));
        }
      },
    },
    amount,
    h('span', {}, '$ a month; at 100 % '),
    action,
    h('button', {type: 'submit'}, 'Set budget'),
  );
  return [
    h('dt', {}, h('label', {for: 'budget'}, 'Monthly budget')),
    h(
      'dd',
      {},
      budget
        ? h(
            'p',
            {id: 'budget-progress'},
            h('progress', {
              max: budget,
              value: Math.min(spent, budget),
              'aria-label': 'budget used',
            }),
            ` ${money(spent)} of ${money(budget)} this month (${percent} %): warned at 80 %, ` +
              `at 100 % ${action.selectedOptions[0].textContent}.`,
          )
        : '',
      form,
      h(
        'p',
        {class: 'hint'},
        "Your pods' cost in this UTC calendar month, projects you own included. 0 or empty: " +
          'no budget.',
      ),
    ),
  ];
}

export async function billing() {
  const [balance, byPod, byDay, me] = await Promise.all([
    api('GET', '/v1/billing/balance'),
    api('GET', '/v1/billing/usage?by=pod'),
    api('GET', '/v1/billing/usage?by=day'),
    api('GET', '/v1/users/me'),
  ]);
  const usage = (rows, what) =>
    table(
      [
        {title: what, cell: (r) => r.key},
        {title: 'GPU time', numeric: true, cell: (r) => gpuTime(r.gpu_seconds)},
        {title: 'GPU', numeric: true, cell: (r) => moneyCell(r.gpu_micros)},
        {title: 'Storage', numeric: true, cell: (r) => moneyCell(r.storage_micros)},
        {title: 'Total', numeric: true, cell: (r) => moneyCell(r.total_micros)},
      ],
      rows,
      {class: 'usage'},
    );
  // What runs now is counted as the balance counts it (servers before that send no
  // unbilled_micros).
  const running = byPod.usage.reduce((sum, r) => sum + (r.unbilled_micros || 0), 0);
  const runningNote =
    running > 0
      ? h(
          'p',
          {class: 'hint', id: 'usage-running'},
          `Includes ${money(running)} run up since the last charge by what runs now: the ` +
            `balance counts it too.`,
        )
      : '';
  const download = async () => {
    const csv = await api('GET', '/v1/billing/usage?by=day&format=csv');
    const link = h('a', {
      href: URL.createObjectURL(new Blob([csv], {type: 'text/csv'})),
      download: 'suanli-usage.csv',
    });
    link.click();
    URL.revokeObjectURL(link.href);
  };
  // The spend cap: the most this user's pods may cost per hour together; 0 (or empty) removes it.
  const status = h('div', {role: 'status'});
  const cap = h('input', {
    id: 'spend-cap',
    type: 'number',
    min: 0,
    step: '0.01',
    placeholder: 'none',
    value: balance.spend_cap_per_hour_micros ? balance.spend_cap_per_hour_micros / 1e6 : '',
  });
  const capForm = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await api('PATCH', '/v1/users/me', {
            spend_cap_per_hour_micros: Math.round(Number(cap.value || 0) * 1e6),
          });
          route();
        } catch (error) {
          status.replaceChildren(errorBox(error));
        }
      },
    },
    cap,
    h('span', {}, '$/h '),
    h('button', {type: 'submit'}, 'Set cap'),
  );
  const dollars = (rows, key) => rows.map((r) => r[key] / 1e6);
  const days = [...byDay.usage].sort((a, b) => a.key.localeCompare(b.key));
  const spendChart = days.length
    ? chart(
        'spend-chart',
        'Spend per day (GPU and storage, stacked)',
        {
          type: 'bar',
          data: {
            labels: days.map((r) => r.key),
            datasets: [
              {label: 'GPU', data: dollars(days, 'gpu_micros'), backgroundColor: PALETTE.accent},
              {
                label: 'Storage',
                data: dollars(days, 'storage_micros'),
                backgroundColor: PALETTE.storage,
              },
            ],
          },
          options: {
            scales: {
              x: {stacked: true},
              y: {
                stacked: true,
                beginAtZero: true,
                title: axisTitle('dollars'),
                ticks: {callback: (value) => money(Math.round(value * 1e6))},
              },
            },
            plugins: {
              tooltip: {
                callbacks: {
                  label: (item) => `${item.dataset.label}: ${money(Math.round(item.raw * 1e6))}`,
                },
              },
            },
          },
        },
        240,
      )
    : '';
  return [
    title('Billing'),
    h(
      'dl',
      {class: 'detail'},
      h('dt', {}, 'Balance'),
      h(
        'dd',
        {id: 'balance', title: exactMoney(balance.balance_micros)},
        money(balance.balance_micros),
      ),
      h('dt', {}, 'Spending now'),
      h('dd', {}, money(balance.spend_rate_per_hour_micros) + '/h'),
      h('dt', {}, 'Runway'),
      h(
        'dd',
        {},
        balance.runway_s === null ? 'nothing is charged now' : roughDuration(balance.runway_s),
      ),
      h('dt', {}, h('label', {for: 'spend-cap'}, 'Spend cap')),
      h(
        'dd',
        {},
        capForm,
        h(
          'p',
          {class: 'hint'},
          'The most your pods may cost per hour together: a new pod over it is refused, and ' +
            'a lower cap stops the newest pods until the rest fit. 0 or empty: no cap.',
        ),
      ),
      ...budgetCard(me, byDay, status),
    ),
    status,
    h('h2', {}, 'Per day'),
    runningNote,
    spendChart,
    byDay.usage.length ? usage(byDay.usage, 'Day') : h('p', {}, 'Nothing charged yet.'),
    h('h2', {}, 'Per pod'),
    byPod.usage.length ? usage(byPod.usage, 'Pod') : h('p', {}, 'Nothing charged yet.'),
    h('button', {type: 'button', onclick: download}, 'Export CSV'),
  ];
}
