// The admin's page (its link shows for admins; the server refuses others anyway): nodes, join
// tokens, users and their credit, prices.
import {api, everyPage} from '../api.js';
import {errorBox, h, table, title} from '../dom.js';
import {dateTime, money} from '../format.js';
import {route} from '../view.js';

export async function admin() {
  const [{nodes}, {users}, {pods: all}, {gpus: catalog}] = await Promise.all([
    api('GET', '/v1/nodes'),
    api('GET', '/v1/users'),
    everyPage('/v1/pods', 'pods'),
    api('GET', '/v1/gpus'),
  ]);
  const status = h('div', {role: 'status'});
  const attempt = async (work) => {
    try {
      await work();
      route(); // show the new state
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  const allocated = (node) =>
    all
      .filter((p) => p.node_id === node.id)
      .reduce((sum, p) => sum + (p.gpu_indices || []).length, 0);
  const health = (node) =>
    (node.gpu_health || [])
      .map((g) =>
        g.problem
          ? `GPU ${g.index}: ${g.problem}`
          : `GPU ${g.index}: ${g.utilization_percent ?? '-'}% ${g.temperature_c ?? '-'}C` +
            (g.xid_errors ? ` ${g.xid_errors} XID` : ''),
      )
      .join('; ') || (node.gpus.some((g) => g.simulated) ? 'simulated: no readings' : '-');
  const nodeState = (node) =>
    [node.state, node.draining ? 'draining' : node.cordoned ? 'cordoned' : '', node.drain_reason]
      .filter(Boolean)
      .join(', ');
  const nodeActions = (node) =>
    h(
      'span',
      {class: 'actions'},
      (node.cordoned ? ['uncordon'] : ['cordon', 'drain']).map((action) =>
        h(
          'button',
          {
            type: 'button',
            class: action === 'drain' ? 'danger' : undefined, // it stops the node's pods
            onclick: () => attempt(() => api('POST', `/v1/nodes/${node.id}/${action}`, {})),
          },
          action,
        ),
      ),
    );
  const gpuText = (node) => {
    const types = {};
    for (const g of node.gpus)
      types[g.type + (g.simulated ? ' (simulated)' : '')] =
        (types[g.type + (g.simulated ? ' (simulated)' : '')] || 0) + 1;
    return (
      Object.entries(types)
        .map(([type, n]) => `${n}x ${type}`)
        .join(', ') || 'none'
    );
  };

  const amount = h('input', {
    id: 'credit-amount',
    type: 'number',
    step: '0.01',
    placeholder: 'dollars',
    'aria-label': 'credit in dollars',
  });
  const who = h(
    'select',
    {id: 'credit-user', 'aria-label': 'user to credit'},
    users.map((u) => h('option', {value: u.id}, u.name)),
  );
  const credit = h(
    'form',
    {
      class: 'inline',
      onsubmit: (event) => {
        event.preventDefault();
        attempt(() =>
          api('POST', `/v1/users/${who.value}/credits`, {
            amount_micros: Math.round(Number(amount.value) * 1e6),
          }),
        );
      },
    },
    who,
    amount,
    h('button', {type: 'submit'}, 'Add credit'),
  );

  // A new renter: name and first credit; their first API token is shown once, to hand over.
  const newName = h('input', {
    id: 'new-user-name',
    required: true,
    maxlength: 64,
    placeholder: 'name',
    'aria-label': 'new user name',
  });
  const newCredits = h('input', {
    id: 'new-user-credits',
    type: 'number',
    step: '0.01',
    min: 0,
    placeholder: 'credit $',
    'aria-label': 'first credit in dollars',
  });
  const newOut = h('div', {'aria-live': 'polite'});
  const newUser = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const made = await api('POST', '/v1/users', {
            name: newName.value.trim(),
            credits_micros: Math.round(Number(newCredits.value || 0) * 1e6),
          });
          users.push(made.user);
          usersTable.replaceWith((usersTable = usersOf(users)));
          who.append(h('option', {value: made.user.id}, made.user.name));
          newOut.replaceChildren(
            h(
              'p',
              {},
              `${made.user.name}'s API token (shown once: hand it over; they sign in with it):`,
            ),
            h('pre', {class: 'command', id: 'new-user-token'}, made.token),
          );
          newName.value = newCredits.value = '';
        } catch (error) {
          newOut.replaceChildren(errorBox(error));
        }
      },
    },
    newName,
    newCredits,
    h('button', {type: 'submit'}, 'Create user'),
  );
  const usersOf = (list) =>
    table(
      [
        {title: 'User', cell: (u) => u.name},
        {title: 'Role', cell: (u) => u.role},
        {title: 'Balance', numeric: true, cell: (u) => money(u.balance_micros)},
      ],
      list,
      {class: 'users'},
    );
  let usersTable = usersOf(users);

  const joinOut = h('div', {'aria-live': 'polite'});
  const join = h(
    'button',
    {
      type: 'button',
      id: 'create-join-token',
      onclick: async () => {
        try {
          const created = await api('POST', '/v1/join-tokens', {note: 'from the console'});
          joinOut.replaceChildren(
            h('p', {}, 'On the GPU host (shown once; valid 24 h):'),
            h(
              'pre',
              {class: 'command'},
              `suanli agent --server ${location.origin} --join-token ${created.secret}`,
            ),
          );
        } catch (error) {
          joinOut.replaceChildren(errorBox(error));
        }
      },
    },
    'Create a join token',
  );

  const priceGpu = h(
    'select',
    {id: 'price-gpu', 'aria-label': 'GPU type'},
    catalog.map((g) => h('option', {value: g.name}, g.name)),
  );
  const priceValue = h('input', {
    id: 'price-value',
    type: 'number',
    step: '0.01',
    min: '0.01',
    placeholder: '$ per GPU-hour',
    'aria-label': 'price per GPU-hour in dollars',
  });
  const price = h(
    'form',
    {
      class: 'inline',
      onsubmit: (event) => {
        event.preventDefault();
        attempt(() =>
          api('PUT', `/v1/prices/${encodeURIComponent(priceGpu.value)}`, {
            price_per_hour_micros: Math.round(Number(priceValue.value) * 1e6),
          }),
        );
      },
    },
    priceGpu,
    priceValue,
    h('button', {type: 'submit'}, 'Set price'),
  );

  return [
    title('Admin'),
    status,
    h('h2', {}, 'Nodes'),
    nodes.length
      ? table(
          [
            {title: 'Node', cell: (n) => n.name},
            {title: 'State', cell: nodeState},
            {title: 'Address', cell: (n) => n.address || '-'},
            {title: 'GPUs', cell: gpuText},
            {title: 'In use', numeric: true, cell: (n) => `${allocated(n)} of ${n.gpus.length}`},
            {title: 'Health', cell: health},
            {title: 'Last heartbeat', cell: (n) => dateTime(n.last_heartbeat)},
            {title: '', cell: nodeActions},
          ],
          nodes,
          {class: 'nodes'},
        )
      : h('p', {}, 'No nodes yet: create a join token below.'),
    join,
    joinOut,
    h('h2', {}, 'Users'),
    usersTable,
    credit,
    newUser,
    newOut,
    h('h2', {}, 'Prices'),
    h('p', {class: 'hint'}, 'What renters pay per GPU-hour; the GPUs page shows the current ones.'),
    price,
  ];
}
