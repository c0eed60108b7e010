// The pods list and a pod's page: its state, how to connect, its actions and its logs.
import {api, everyPage} from '../api.js';
import {errorBox, h, moneyCell, table, title} from '../dom.js';
import {bytes, duration, money, podGpuRate, podGpus} from '../format.js';
import {currentProject, projectName} from '../projects.js';
import {isAdmin} from '../session.js';
import {poll} from '../view.js';

function podState(pod) {
  const text =
    pod.state === 'running' ? (pod.ready ? 'running, ready' : 'running, not ready yet') : pod.state;
  return h('span', {class: 'state state-' + pod.state}, text);
}

const podsState = {showTerminated: false};

// The pods list. Terminated pods stay in the list the server keeps (their cost is history), but
// they are hidden unless asked for: they would soon outnumber the live ones. An admin sees
// everyone's pods, so whose each is and its project: every pod on "Just me", a project's when
// one is chosen in the bar.
export async function pods() {
  const admin = isAdmin();
  const names = admin
    ? Object.fromEntries(
        (await api('GET', '/v1/users').catch(() => ({users: []}))).users.map((u) => [u.id, u.name]),
      )
    : {};
  const holder = h('div', {'aria-live': 'polite'});
  let latest = null;
  const project = currentProject();
  const everyPod = admin && !project;
  const shownHere = (p) => everyPod || (p.project_id || '') === project;
  const show = () => {
    const here = latest.filter(shownHere);
    const list = here.filter((p) => podsState.showTerminated || p.state !== 'terminated');
    const hidden = here.length - list.length;
    holder.replaceChildren(
      ...(here.length === 0
        ? [
            h(
              'p',
              {},
              project ? `No pods in project ${projectName(project)} yet. ` : 'No pods yet. ',
              h('a', {href: '#/deploy'}, 'Deploy one.'),
            ),
          ]
        : [
            list.length
              ? table(
                  [
                    {title: 'Pod', cell: (p) => h('a', {href: '#/pods/' + p.id}, p.name || p.id)},
                    admin && {title: 'Owner', cell: (p) => names[p.owner_id] || p.owner_id},
                    everyPod && {
                      title: 'Project',
                      cell: (p) => (p.project_id ? projectName(p.project_id) : '-'),
                    },
                    {title: 'State', cell: podState},
                    {title: 'GPU', cell: (p) => `${podGpus(p)}x ${p.gpu_type}`},
                    {title: 'Node', cell: (p) => p.node_id || '-'},
                    {title: 'Uptime', numeric: true, cell: (p) => duration(p.uptime_s)},
                    {title: 'Cost', numeric: true, cell: (p) => moneyCell(p.cost_micros)},
                    {title: 'Why', cell: (p) => p.state_reason || ''},
                  ].filter(Boolean),
                  list,
                  {class: 'pods'},
                )
              : h('p', {}, 'No live pods. ', h('a', {href: '#/deploy'}, 'Deploy one.')),
            hidden
              ? h('p', {class: 'hint'}, `${hidden} terminated pod${hidden > 1 ? 's' : ''} hidden.`)
              : '',
          ]),
    );
  };
  const toggle = h('input', {
    id: 'show-terminated',
    type: 'checkbox',
    checked: podsState.showTerminated,
    onchange: (event) => {
      podsState.showTerminated = event.target.checked;
      if (latest) show();
    },
  });
  poll(2000, async () => {
    try {
      latest = (await everyPage('/v1/pods?view=compact', 'pods')).pods;
      show();
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  });
  return [
    title('Pods', ' ', h('a', {class: 'button', href: '#/deploy'}, 'Deploy')),
    h('label', {class: 'check'}, toggle, ' Show terminated pods'),
    holder,
  ];
}

function connections(pod) {
  const items = [];
  const host =
    pod.node_address && pod.node_address.includes(':') ? `[${pod.node_address}]` : pod.node_address;
  // Only a running pod has ports to reach: a stopped one's host ports may be another pod's now.
  const mappings = pod.state === 'running' ? pod.port_mappings || [] : [];
  for (const port of mappings) {
    if (port.container_port === 22 && pod.node_address) {
      items.push(
        h('li', {}, 'SSH: ', h('code', {}, `ssh -p ${port.host_port} root@${pod.node_address}`)),
      );
    } else if (port.container_port === 8888 && pod.jupyter_token && host) {
      items.push(
        h(
          'li',
          {},
          h(
            'a',
            {
              href: `http://${host}:${port.host_port}/lab?token=${pod.jupyter_token}`,
              target: '_blank',
              rel: 'noopener noreferrer',
            },
            'Jupyter',
          ),
        ),
      );
    } else if (port.protocol === 'http' && pod.link_token) {
      items.push(
        h(
          'li',
          {},
          h(
            'a',
            {
              href:
                `/v1/pods/${pod.id}/proxy/${port.container_port}/` +
                `?suanli_link=${pod.link_token}`,
              target: '_blank',
              rel: 'noopener noreferrer',
            },
            `HTTP port ${port.container_port}`,
          ),
        ),
      );
    } else {
      items.push(
        h('li', {}, `${port.container_port}/${port.protocol} on host port ${port.host_port}`),
      );
    }
  }
  return items.length
    ? h('ul', {class: 'connect'}, items)
    : h('p', {class: 'hint'}, 'No ports to reach while it is not running.');
}

// What one GPU of `gpuType` costs an hour here now (the catalog's price or the admin's), read once
// per page; undefined where it cannot be read.
async function gpuPrice(gpuType) {
  const catalog = await api('GET', '/v1/gpus').catch(() => ({gpus: []}));
  return (catalog.gpus.find((g) => g.name === gpuType) || {}).price_per_hour_micros;
}

// A pod's GPU price: a running pod's is the one fixed when its run started; any other's is what
// its next run will be billed at, today's price of its GPUs (its own field is 0 until it runs).
function priceText(pod, perGpuHour) {
  if (pod.state === 'running' || pod.state === 'terminated' || perGpuHour === undefined) {
    return `${money(pod.gpu_price_per_hour_micros)}/h GPU`;
  }
  return `${money(podGpuRate(pod, perGpuHour))}/h GPU once it runs`;
}

export function pod(id) {
  const holder = h('div', {'aria-live': 'polite'});
  let perGpuHour = null; // a promise of gpuPrice(), asked for on the first poll
  const logs = h('pre', {class: 'logs', tabindex: 0, 'aria-label': 'logs'});
  let logsOf = null; // the stop whose saved logs are shown
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
      perGpuHour ??= gpuPrice(p.gpu_type);
      const rows = [
        ['State', podState(p)],
        ['Why', p.state_reason || '-'],
        ['GPU', `${podGpus(p)}x ${p.gpu_type}`],
        ['Node', p.node_id || '-'],
        ['Image', p.image],
        [
          'Price',
          priceText(p, await perGpuHour) +
            (p.storage_price_per_hour_micros
              ? `, ${money(p.storage_price_per_hour_micros)}/h storage`
              : ''),
        ],
        ['Uptime', duration(p.uptime_s)],
        ['Cost so far', money(p.cost_micros)],
      ];
      if (p.pull) {
        rows.splice(2, 0, [
          'Pulling',
          h(
            'progress',
            {max: p.pull.total_bytes || undefined, value: p.pull.current_bytes},
            bytes(p.pull.current_bytes),
          ),
        ]);
      }
      const autoStops = [
        p.idle_stop_after_s ? `when idle for ${duration(p.idle_stop_after_s)}` : '',
        p.stop_after_s ? `after ${duration(p.stop_after_s)} of running` : '',
      ].filter(Boolean);
      if (autoStops.length)
        rows.push([
          'Auto-stop',
          autoStops.join('; ') + (p.pre_stop_command ? `; first runs: ${p.pre_stop_command}` : ''),
        ]);
      if (p.terminate_after_stopped_s)
        rows.push([
          'Auto-terminate',
          `once left stopped for ${duration(p.terminate_after_stopped_s)}`,
        ]);
      if (p.state === 'stopped' && p.volume_gb > 0) {
        rows.push([
          'While stopped',
          `the ${p.volume_gb} GB volume costs ${money(p.storage_price_per_month_micros)} a ` +
            `month until terminated`,
        ]);
      }
      holder.replaceChildren(
        h(
          'dl',
          {class: 'detail'},
          rows.map(([label, value]) => [h('dt', {}, label), h('dd', {}, value)]),
        ),
        h('h2', {}, 'Connect'),
        connections(p),
        h(
          'div',
          {class: 'actions'},
          (p.actions || []).map((action) =>
            h(
              'button',
              {
                type: 'button',
                class: action === 'terminate' ? 'danger' : undefined,
                onclick: () => act(action),
              },
              action,
            ),
          ),
        ),
      );
      if (p.state === 'running') {
        // Follows the end, as `tail -f` does, unless the reader has scrolled up to read.
        const following = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
        logs.textContent = await api('GET', `/v1/pods/${id}/logs?tail=200`).catch(
          (error) => error.message,
        );
        if (following) logs.scrollTop = logs.scrollHeight;
      } else if (['stopped', 'exited', 'failed'].includes(p.state) && logsOf !== p.state_since) {
        // Its container is gone; the server kept the end of its output: read once per stop.
        logsOf = p.state_since;
        logs.textContent = '';
        logs.textContent = await api('GET', `/v1/pods/${id}/logs?tail=200`).catch(
          (error) => error.message,
        );
        logs.scrollTop = logs.scrollHeight;
      }
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  });
  return [title('Pod ' + id), holder, status, h('h2', {}, 'Logs'), logs];
}
