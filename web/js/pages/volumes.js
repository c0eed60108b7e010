// Volumes and their snapshots.
import {api} from '../api.js';
import {dangerButton, errorBox, h, moneyCell, table, title} from '../dom.js';
import {bytes, dateTime} from '../format.js';
import {currentProject, projectName} from '../projects.js';
import {poll} from '../view.js';

// Volumes of one's own (they outlive pods and follow them from node to node) and their snapshots:
// create, delete, snapshot, restore a snapshot into a new volume. The server refuses what cannot be
// done (a snapshot of a volume a running pod writes, say) and its reason is shown as it is.
// The volumes and snapshots of the project in the switcher (or your own), as the pods list.
export async function volumes() {
  const project = currentProject();
  const inScope = (thing) => (thing.project_id || '') === project;
  const volumeList = h('div', {'aria-live': 'polite'});
  const snapshotList = h('div', {'aria-live': 'polite'});
  const out = h('div', {'aria-live': 'polite'});
  const from = h('select', {id: 'volume-from', 'aria-label': 'fill it from a snapshot'});
  const act = async (call) => {
    try {
      await call();
      out.replaceChildren();
      await refresh();
    } catch (error) {
      out.replaceChildren(errorBox(error));
    }
  };
  const refresh = async () => {
    try {
      const [{volumes: allVolumes}, {snapshots: allSnapshots}] = await Promise.all([
        api('GET', '/v1/volumes'),
        api('GET', '/v1/snapshots'),
      ]);
      const vols = allVolumes.filter(inScope);
      const snaps = allSnapshots.filter(inScope);
      volumeList.replaceChildren(
        vols.length === 0
          ? h(
              'p',
              {},
              project
                ? `No volumes in project ${projectName(project)} yet: create one below; the ` +
                    `project's pods mount it.`
                : 'No volumes yet: create one below, then attach it to pods (suanli pods ' +
                    'create --volume NAME:/data).',
            )
          : table(
              [
                {title: 'Volume', cell: (v) => v.name},
                {title: 'Size', numeric: true, cell: (v) => `${v.size_gb} GB`},
                {
                  title: 'Node',
                  cell: (v) => (v.shared ? 'any (shared backend)' : v.home_node || '-'),
                },
                {title: 'State', cell: (v) => v.state},
                {
                  title: 'Pods',
                  cell: (v) =>
                    v.attached_to.length
                      ? v.attached_to.join(', ') + (v.attached_read_write ? ' (rw)' : ' (ro)')
                      : '-',
                },
                {
                  title: '$/month',
                  numeric: true,
                  cell: (v) => moneyCell(v.storage_price_per_gb_month_micros * v.size_gb),
                },
                {title: 'Cost', numeric: true, cell: (v) => moneyCell(v.cost_micros)},
                {
                  title: '',
                  cell: (v) =>
                    h(
                      'span',
                      {class: 'actions'},
                      h(
                        'button',
                        {
                          type: 'button',
                          onclick: () =>
                            act(() => api('POST', `/v1/volumes/${v.id}/snapshots`, {})),
                        },
                        'Snapshot',
                      ),
                      dangerButton('Delete', () => act(() => api('DELETE', '/v1/volumes/' + v.id))),
                    ),
                },
              ],
              vols,
              {class: 'volumes'},
            ),
      );
      snapshotList.replaceChildren(
        snaps.length === 0
          ? h(
              'p',
              {},
              'No snapshots yet: a snapshot is a point-in-time copy of a volume (stop the ' +
                'pod that writes it first).',
            )
          : table(
              [
                {title: 'Snapshot', cell: (s) => s.name},
                {title: 'Of volume', cell: (s) => s.volume_name},
                {
                  title: 'State',
                  cell: (s) => (s.state === 'failed' ? `failed: ${s.state_reason}` : s.state),
                },
                {
                  title: 'Size',
                  numeric: true,
                  cell: (s) => (s.state === 'ready' ? bytes(s.size_bytes) : '-'),
                },
                {
                  title: 'SHA-256',
                  cell: (s) =>
                    s.sha256 ? h('code', {title: s.sha256}, s.sha256.slice(0, 12)) : '-',
                },
                {title: 'Cost', numeric: true, cell: (s) => moneyCell(s.cost_micros)},
                {title: 'Taken', cell: (s) => dateTime(s.created_at)},
                {
                  title: '',
                  cell: (s) =>
                    dangerButton('Delete', () => act(() => api('DELETE', '/v1/snapshots/' + s.id))),
                },
              ],
              snaps,
              {class: 'snapshots'},
            ),
      );
      const chosen = from.value;
      from.replaceChildren(
        h('option', {value: ''}, 'empty'),
        ...snaps
          .filter((s) => s.state === 'ready')
          .map((s) =>
            h(
              'option',
              {value: s.id, selected: s.id === chosen ? '' : undefined},
              `from snapshot ${s.name}`,
            ),
          ),
      );
    } catch (error) {
      volumeList.replaceChildren(errorBox(error));
    }
  };
  poll(3000, refresh);
  const name = h('input', {
    id: 'volume-name',
    required: true,
    maxlength: 64,
    placeholder: 'name',
    'aria-label': 'volume name',
  });
  const size = h('input', {
    id: 'volume-size',
    type: 'number',
    min: 1,
    max: 100000,
    placeholder: 'GB',
    'aria-label': 'size in GB',
  });
  const shared = h('input', {id: 'volume-shared', type: 'checkbox'});
  const create = h(
    'form',
    {
      class: 'inline',
      onsubmit: (event) => {
        event.preventDefault();
        const body = {name: name.value.trim()};
        if (size.value) body.size_gb = Number(size.value);
        if (from.value) body.from_snapshot = from.value;
        if (shared.checked) body.shared = true;
        if (project) body.project = project;
        act(async () => {
          await api('POST', '/v1/volumes', body);
          name.value = '';
        });
      },
    },
    name,
    h('label', {}, 'size ', size),
    from,
    h(
      'label',
      {
        title:
          'On the shared backend (an NFS export every such node mounts): any of those nodes ' +
          'runs its pods, and its data never moves',
      },
      shared,
      ' shared backend',
    ),
    h('button', {type: 'submit'}, 'Create volume'),
  );
  return [
    title('Volumes'),
    project
      ? h(
          'p',
          {class: 'hint', id: 'volumes-project'},
          `Project ${projectName(project)}'s: mounted by its pods only, billed to its owner.`,
        )
      : '',
    h(
      'p',
      {class: 'hint'},
      'Billed per GB-month by the second, attached or not. The same: suanli volumes.',
    ),
    volumeList,
    h('h2', {}, 'New volume'),
    create,
    out,
    h('h2', {}, 'Snapshots'),
    snapshotList,
  ];
}
