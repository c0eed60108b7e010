// The events of the user's pods and account.
import {api} from '../api.js';
import {errorBox, h, table, title} from '../dom.js';
import {dateTime} from '../format.js';
import {poll} from '../view.js';

// The newest events of the user's pods and account (an admin's: all), polled every 5 s; a kind
// filter. Pods link to their page.
export function events() {
  const kind = h(
    'select',
    {id: 'event-kind'},
    [
      '',
      'pod.state',
      'pod.idle_warning',
      'pod.idle_stop',
      'pod.runtime_warning',
      'pod.runtime_stop',
      'pod.preempted',
      'pod.balance_stop',
      'pod.spend_cap_stop',
      'pod.node_drained',
      'balance.low',
      'node.unreachable',
      'node.drained',
      'volume.moved',
      'volume.snapshot_ready',
      'volume.snapshot_failed',
      'volume.restored',
    ].map((k) => h('option', {value: k}, k || 'all kinds')),
  );
  const holder = h('div', {'aria-live': 'polite'});
  const show = async () => {
    const query = kind.value ? `&kind=${encodeURIComponent(kind.value)}` : '';
    const answer = await api('GET', `/v1/events?tail=100${query}`).catch((error) => ({error}));
    if (answer.error) {
      holder.replaceChildren(errorBox(answer.error));
      return;
    }
    const newest = [...answer.events].reverse();
    const object = (e) =>
      e.object_id.startsWith('pod_')
        ? h('a', {href: '#/pods/' + e.object_id}, e.object_id)
        : e.object_id || '-';
    holder.replaceChildren(
      newest.length
        ? table(
            [
              {title: 'Time', cell: (e) => dateTime(e.time)},
              {title: 'Kind', cell: (e) => h('span', {class: 'event-kind'}, e.kind)},
              {title: 'Object', cell: object},
              {title: 'What happened', cell: (e) => e.message},
            ],
            newest,
            {class: 'events'},
          )
        : h(
            'p',
            {},
            kind.value
              ? `No ${kind.value} events.`
              : 'No events yet: they come when your pods change state, are stopped for you, ' +
                  'or your balance runs low.',
          ),
    );
  };
  kind.addEventListener('input', show);
  poll(5000, show);
  return [
    title('Events'),
    h('p', {class: 'hint'}, 'Newest first. The same list: suanli events (-f follows).'),
    h('label', {for: 'event-kind'}, 'Kind '),
    kind,
    holder,
  ];
}
