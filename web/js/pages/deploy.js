// The deploy form: a template from the gallery, a GPU type with what is free, resources, auto-stop,
// environment and an SSH key; the price per hour shown before deploying.
import {api} from '../api.js';
import {errorBox, h, title} from '../dom.js';
import {money} from '../format.js';
import {currentProject, projectName} from '../projects.js';
import {poll} from '../view.js';

export async function deploy(query = '') {
  const [{templates}, {gpus: free}, {ssh_keys: keys}] = await Promise.all([
    api('GET', '/v1/templates'),
    api('GET', '/v1/availability'),
    api('GET', '/v1/ssh-keys'),
  ]);
  const wanted = new URLSearchParams(query); // from the advisor's Deploy-this link
  // The template gallery: one card per template (what it runs, its ports and disks), a radio group
  // underneath, so arrow keys move between them.
  const facts = (t) =>
    [
      t.image,
      t.ports.length ? 'ports ' + t.ports.join(', ') : 'no ports',
      `disk ${t.container_disk_gb} GB`,
      `volume ${t.volume_gb} GB at ${t.volume_mount_path}`,
    ].join(' · ');
  const gallery = h(
    'fieldset',
    {class: 'gallery'},
    h('legend', {}, 'Template'),
    templates.map((t, index) =>
      h(
        'label',
        {class: 'template-card'},
        h('input', {
          type: 'radio',
          name: 'template',
          value: t.id,
          checked: index === 0,
          required: true,
        }),
        h('strong', {}, t.name),
        h('span', {}, t.description),
        h('span', {class: 'hint'}, facts(t)),
      ),
    ),
  );
  const chosenTemplate = () => gallery.querySelector('input[name=template]:checked')?.value;
  // Shares (0.5 of a GPU) use what partly used devices have left: shown beside the whole ones.
  const sharedFree = (g) =>
    g.shared_free_milli > 0 ? ` + ${g.shared_free_milli / 1000} shared` : '';
  // A GPU nobody uses whose node lacks the vCPU or RAM a pod needs beside it is not free
  // (stranded).
  const stranded = (g) =>
    g.stranded > 0
      ? ` (${g.stranded} more idle, without the vCPU or RAM to use ` +
        `${g.stranded > 1 ? 'them' : 'it'})`
      : '';
  const gpuLabel = (g) =>
    `${g.gpu_type}${g.simulated ? ' (simulated)' : ''}: ${g.free}${sharedFree(g)} of ` +
    `${g.total} free${stranded(g)}, ${money(g.price_per_hour_micros)}/h`;
  const gpu = h(
    'select',
    {id: 'gpu'},
    free.map((g) =>
      h('option', {value: g.gpu_type, selected: g.gpu_type === wanted.get('gpu')}, gpuLabel(g)),
    ),
  );
  // Whole GPUs, or a share of one (0.5, 0.25: several pods on one device, each billed its part).
  const count = h('input', {
    id: 'count',
    type: 'number',
    min: 0.001,
    max: 64,
    step: 'any',
    value: wanted.get('count') || 1,
    required: true,
    title: 'Whole GPUs (1, 2, 4, 8) or a share of one GPU (0.5, 0.25)',
  });
  const unavailable =
    wanted.get('gpu') && !free.some((g) => g.gpu_type === wanted.get('gpu'))
      ? h(
          'p',
          {class: 'error', role: 'alert'},
          `No ${wanted.get('gpu')} is free now: pick a type that is.`,
        )
      : '';
  // A name to know the pod by in the list (the server's rule: letters, digits, . _ @ + -);
  // empty: its id.
  const name = h('input', {
    id: 'pod-name',
    type: 'text',
    maxlength: 64,
    pattern: '[A-Za-z0-9][A-Za-z0-9._@+\\-]*',
    placeholder: 'e.g. finetune-run-3 (empty: the pod id)',
    autocomplete: 'off',
  });
  const env = h('textarea', {id: 'env', rows: 3, placeholder: 'KEY=value, one per line'});
  // Resources: empty means the server's default (2 vCPU and 8 GB of RAM per GPU; the template's
  // disks).
  const resource = (id, label, max) =>
    h('label', {}, label, ' ', h('input', {id, type: 'number', min: id === 'volume' ? 0 : 1, max}));
  const resources = h(
    'fieldset',
    {class: 'resources'},
    h('legend', {}, 'Resources (empty: the default shown)'),
    resource('vcpu', 'vCPU', 1024),
    resource('memory', 'RAM GB', 16384),
    resource('disk', 'Container disk GB', 10000),
    resource('volume', 'Volume GB', 100000),
  );
  // Auto-stop: durations as the API takes them ("30m", "2h"); empty: never.
  const stopInput = (id, label, placeholder) =>
    h(
      'label',
      {},
      label,
      ' ',
      h('input', {id, type: 'text', placeholder, pattern: '[0-9]+[smhd]?([0-9]+[smhd])*', size: 8}),
    );
  const autoStop = h(
    'fieldset',
    {class: 'resources'},
    h('legend', {}, 'Auto-stop (empty: never)'),
    stopInput('idle-stop-after', 'Stop when idle for', '30m'),
    stopInput('stop-after', 'Stop after running', '8h'),
    h(
      'label',
      {},
      'Before stopping, run ',
      h('input', {
        id: 'pre-stop-command',
        type: 'text',
        placeholder: 'a shell command, e.g. save a checkpoint',
        size: 32,
      }),
    ),
    stopInput('terminate-after-stopped', 'Terminate once left stopped for', '7d'),
    h(
      'label',
      {},
      h('input', {id: 'terminate-deletes-volume', type: 'checkbox'}),
      ' deleting its volume with it (volumes of your own stay)',
    ),
    h(
      'p',
      {class: 'hint'},
      'Idle: GPU below 5%, CPU below 10% of a core, no SSH session and no HTTP through the ' +
        'proxy. A warning event comes first; see Events.',
    ),
  );
  const sshKey = h('textarea', {
    id: 'ssh-key',
    rows: 2,
    spellcheck: 'false',
    placeholder: 'ssh-ed25519 AAAA... you@laptop',
  });
  const keysNote = h(
    'p',
    {class: 'hint'},
    keys.length
      ? `Your ${keys.length} SSH key${keys.length > 1 ? 's go' : ' goes'} into the pod ` +
          `(${keys.map((k) => k.name).join(', ')}); add another here if you like.`
      : 'No SSH key yet: paste your public key (~/.ssh/id_ed25519.pub) to reach the pod by ' +
          'SSH. It is kept for your next pods.',
  );
  const price = h('p', {class: 'price', 'aria-live': 'polite'});
  const status = h('div', {role: 'status'});
  const deployButton = h('button', {type: 'submit'}, 'Deploy');
  const update = () => {
    deployButton.disabled = free.length === 0;
    const t = templates.find((x) => x.id === chosenTemplate());
    const gpus = Number(count.value) || 1;
    const defaults = {
      vcpu: Math.max(1, Math.floor(2 * gpus)),
      memory: Math.max(1, Math.floor(8 * gpus)),
      disk: t ? t.container_disk_gb : '',
      volume: t ? t.volume_gb : '',
    };
    for (const [id, value] of Object.entries(defaults))
      resources.querySelector('#' + id).placeholder = value;
    const g = free.find((x) => x.gpu_type === gpu.value);
    price.textContent = g
      ? `${money(g.price_per_hour_micros * Number(count.value || 0))} per hour for the GPUs ` +
        `while it runs, billed by the second.`
      : 'No GPU type has free GPUs now.';
  };
  [gallery, gpu, count].forEach((input) => input.addEventListener('input', update));
  update();
  // Others deploy and stop meanwhile: the free counts and prices are fetched again every 5 s (the
  // first time 5 s from now: they were just fetched).
  poll(
    5000,
    async () => {
      const latest = await api('GET', '/v1/availability').catch(() => null);
      if (!latest) return;
      free.splice(0, free.length, ...latest.gpus);
      for (const g of free) {
        const option = [...gpu.options].find((o) => o.value === g.gpu_type);
        if (option) option.textContent = gpuLabel(g);
        else gpu.append(h('option', {value: g.gpu_type}, gpuLabel(g)));
      }
      update();
    },
    5000,
  );
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (event) => {
        event.preventDefault();
        const body = {
          template: chosenTemplate(),
          gpu_type: gpu.value,
          gpu_count: Number(count.value),
        };
        if (name.value.trim()) body.name = name.value.trim();
        if (currentProject()) body.project = currentProject();
        for (const [id, key] of [
          ['vcpu', 'vcpu'],
          ['memory', 'memory_gb'],
          ['disk', 'container_disk_gb'],
          ['volume', 'volume_gb'],
        ]) {
          const value = resources.querySelector('#' + id).value;
          if (value !== '') body[key] = Number(value);
        }
        for (const [id, key] of [
          ['idle-stop-after', 'idle_stop_after'],
          ['stop-after', 'stop_after'],
          ['pre-stop-command', 'pre_stop_command'],
          ['terminate-after-stopped', 'terminate_after_stopped'],
        ]) {
          const value = autoStop.querySelector('#' + id).value.trim();
          if (value !== '') body[key] = value;
        }
        if (autoStop.querySelector('#terminate-deletes-volume').checked)
          body.terminate_deletes_volume = true;
        const pairs = env.value
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean);
        if (pairs.length) {
          body.env = {};
          for (const pair of pairs) {
            const at = pair.indexOf('=');
            if (at <= 0) {
              status.replaceChildren(errorBox(new Error(`"${pair}" is not KEY=value`)));
              return;
            }
            body.env[pair.slice(0, at)] = pair.slice(at + 1);
          }
        }
        try {
          const key = sshKey.value.trim();
          if (key) {
            await api('POST', '/v1/ssh-keys', {
              name: key.split(/\s+/)[2] || 'from the console',
              public_key: key,
            });
            sshKey.value = ''; // kept now: a second try must not add it again
          }
          const pod = await api('POST', '/v1/pods', body);
          location.hash = '#/pods/' + pod.id;
        } catch (error) {
          status.replaceChildren(errorBox(error));
        }
      },
    },
    gallery,
    h('label', {for: 'pod-name'}, 'Name'),
    name,
    h('label', {for: 'gpu'}, 'GPU type'),
    gpu,
    unavailable,
    h('label', {for: 'count'}, 'GPUs'),
    count,
    resources,
    autoStop,
    h('label', {for: 'env'}, 'Environment'),
    env,
    h('label', {for: 'ssh-key'}, 'SSH public key'),
    sshKey,
    keysNote,
    price,
    deployButton,
    status,
  );
  return [
    title('Deploy a pod'),
    currentProject()
      ? h(
          'p',
          {class: 'hint', id: 'deploy-project'},
          `Into project ${projectName(currentProject())}: its members see and run the pod, ` +
            `and its owner pays.`,
        )
      : '',
    form,
  ];
}
