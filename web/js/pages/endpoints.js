// Serverless endpoints: their workers and jobs, refreshed every 2 s; create and delete.
import {api} from '../api.js';
import {dangerButton, errorBox, h, table, title} from '../dom.js';
import {poll} from '../view.js';

function endpointWorkers(endpoint) {
  const count = (state) => endpoint.workers.filter((w) => w.state === state).length;
  return (
    `${endpoint.workers.length} (${endpoint.min_workers}-${endpoint.max_workers}): ` +
    `${count('running')} busy, ${count('idle')} idle, ${count('initializing')} starting`
  );
}

export async function endpoints() {
  const {templates} = await api('GET', '/v1/templates');
  const holder = h('div', {'aria-live': 'polite'});
  const refresh = async () => {
    try {
      const {endpoints: list} = await api('GET', '/v1/endpoints');
      holder.replaceChildren(
        list.length === 0
          ? h(
              'p',
              {},
              'No endpoints yet: create one below; its jobs go to the RunPod-compatible API ' +
                'under /v2.',
            )
          : table(
              [
                {title: 'Endpoint', cell: (e) => e.name},
                {title: 'Job API', cell: (e) => h('code', {}, e.url + '/run')},
                {title: 'Workers', cell: endpointWorkers},
                {title: 'Queued', numeric: true, cell: (e) => String(e.jobs.in_queue)},
                {title: 'Running', numeric: true, cell: (e) => String(e.jobs.in_progress)},
                {title: 'Done', numeric: true, cell: (e) => String(e.jobs.completed)},
                {
                  title: 'Failed',
                  numeric: true,
                  cell: (e) => String(e.jobs.failed + e.jobs.timed_out),
                },
                {title: 'Note', cell: (e) => e.scale_error || ''},
                {
                  title: '',
                  cell: (e) =>
                    dangerButton('Delete', async () => {
                      try {
                        await api('DELETE', '/v1/endpoints/' + e.id);
                        await refresh();
                      } catch (error) {
                        holder.replaceChildren(errorBox(error));
                      }
                    }),
                },
              ],
              list,
              {class: 'endpoints'},
            ),
      );
    } catch (error) {
      holder.replaceChildren(errorBox(error));
    }
  };
  poll(2000, refresh);
  const name = h('input', {
    id: 'endpoint-name',
    required: true,
    maxlength: 64,
    placeholder: 'name',
    'aria-label': 'endpoint name',
  });
  const template = h(
    'select',
    {id: 'endpoint-template', 'aria-label': 'worker template'},
    templates.map((t) =>
      h('option', {value: t.id, selected: t.id === 'demo-worker' ? '' : undefined}, t.name),
    ),
  );
  const gpu = h('input', {
    id: 'endpoint-gpu',
    placeholder: 'GPU (4090, 0.5 share: 4090)',
    value: 'cheapest',
    'aria-label': 'GPU type of each worker',
  });
  const max = h('input', {
    id: 'endpoint-max',
    type: 'number',
    min: 1,
    max: 100,
    value: 3,
    'aria-label': 'most workers',
  });
  const idle = h('input', {
    id: 'endpoint-idle',
    type: 'number',
    min: 1,
    max: 3600,
    value: 5,
    'aria-label': 'idle timeout in seconds',
  });
  // How workers get their jobs: they take them from the queue, or they are HTTP servers to which
  // each job is posted (a vLLM server: port 8000, /v1/completions).
  const mode = h(
    'select',
    {id: 'endpoint-mode', 'aria-label': 'how workers get jobs'},
    h('option', {value: 'queue'}, 'workers take jobs'),
    h('option', {value: 'http'}, 'post jobs to a port'),
  );
  const port = h('input', {
    id: 'endpoint-http-port',
    type: 'number',
    min: 1,
    max: 65535,
    placeholder: 'port',
    'aria-label': "workers' HTTP port",
  });
  const path = h('input', {
    id: 'endpoint-http-path',
    placeholder: '/path',
    value: '/',
    'aria-label': 'path jobs are posted to',
  });
  const httpFields = h('span', {hidden: true}, port, path);
  mode.addEventListener('change', () => {
    httpFields.hidden = mode.value !== 'http';
  });
  const out = h('div', {'aria-live': 'polite'});
  const create = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const body = {
            name: name.value.trim(),
            template: template.value,
            gpu_type: gpu.value.trim(),
            max_workers: Number(max.value),
            idle_timeout_s: Number(idle.value),
            worker_mode: mode.value,
          };
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
      },
    },
    name,
    template,
    gpu,
    h('label', {}, 'max workers ', max),
    h('label', {}, 'idle s ', idle),
    mode,
    httpFields,
    h('button', {type: 'submit'}, 'Create endpoint'),
  );
  return [
    title('Endpoints'),
    h(
      'p',
      {class: 'hint'},
      'Workers are pods that start when jobs wait and stop when idle; you pay for their seconds.',
    ),
    holder,
    h('h2', {}, 'New endpoint'),
    create,
    out,
  ];
}
