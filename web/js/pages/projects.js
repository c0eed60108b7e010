// The Projects page: projects, their members and their limits.
import {api} from '../api.js';
import {dangerButton, errorBox, h, table, title} from '../dom.js';
import {money} from '../format.js';
import {projectsKnown, refreshProjects} from '../projects.js';

export async function projects() {
  const me = (await api('GET', '/v1/users/me')).id;
  const out = h('div', {'aria-live': 'polite'});
  const list = h('div', {'aria-live': 'polite'});
  const act = async (call) => {
    try {
      await call();
      out.replaceChildren();
      await refreshProjects();
      show();
    } catch (error) {
      out.replaceChildren(errorBox(error));
    }
  };
  // A project's own limits, inside its owner's: empty fields are left as they are, 0 removes one.
  const limitsOf = h('select', {id: 'limits-project', 'aria-label': 'project'});
  const cap = h('input', {
    id: 'limits-cap',
    type: 'number',
    min: 0,
    step: '0.01',
    placeholder: 'as it is',
    'aria-label': 'cap in dollars per hour',
  });
  const monthly = h('input', {
    id: 'limits-monthly',
    type: 'number',
    min: 0,
    step: '0.01',
    placeholder: 'as it is',
    'aria-label': 'monthly budget in dollars',
  });
  const action = h(
    'select',
    {id: 'limits-action', 'aria-label': 'at 100 % of the budget'},
    h('option', {value: ''}, 'action as it is'),
    ...[
      ['notify', 'only tell me'],
      ['stop_interruptible', 'stop its interruptible pods'],
      ['stop_all', 'stop all its pods'],
    ].map(([value, text]) => h('option', {value}, text)),
  );
  const limits = h(
    'form',
    {
      class: 'inline',
      onsubmit: (event) => {
        event.preventDefault();
        const body = {};
        if (cap.value !== '') body.spend_cap_per_hour_micros = Math.round(Number(cap.value) * 1e6);
        if (monthly.value !== '')
          body.monthly_budget_micros = Math.round(Number(monthly.value) * 1e6);
        if (action.value) body.action = action.value;
        act(() => api('PUT', `/v1/projects/${limitsOf.value}/budget`, body));
      },
    },
    limitsOf,
    h('label', {}, 'cap ', cap, ' $/h'),
    h('label', {}, 'budget ', monthly, ' $ a month'),
    action,
    h('button', {type: 'submit'}, 'Set limits'),
  );
  const limitsSection = h('div', {});
  const show = () => {
    const knownProjects = projectsKnown();
    const owned = knownProjects.filter((p) => p.owner_id === me);
    const chosen = limitsOf.value;
    limitsOf.replaceChildren(
      ...owned.map((p) =>
        h('option', {value: p.id, selected: p.id === chosen ? '' : undefined}, p.name),
      ),
    );
    limitsSection.replaceChildren(
      ...(owned.length
        ? [
            h('h2', {}, "A project's limits"),
            limits,
            h(
              'p',
              {class: 'hint'},
              'Inside your own: a cap on what its pods cost per hour together (a pod past it ' +
                'is refused), and a monthly budget over its pods, warned at 80 %.',
            ),
          ]
        : []),
    );
    list.replaceChildren(
      knownProjects.length === 0
        ? h(
            'p',
            {},
            'No projects yet: create one, add your team as members, and deploy into it (the ' +
              'switcher in the bar).',
          )
        : table(
            [
              {title: 'Project', cell: (p) => p.name},
              {
                title: 'Members',
                cell: (p) =>
                  p.members
                    // A server before members' names sends ids only.
                    .map((m) => `${m.user_id === me ? 'you' : m.name || m.user_id} (${m.role})`)
                    .join(', '),
              },
              {
                title: 'Limits',
                cell: (p) =>
                  [
                    p.spend_cap_per_hour_micros
                      ? `cap ${money(p.spend_cap_per_hour_micros)}/h`
                      : '',
                    p.monthly_budget_micros
                      ? `${money(p.monthly_budget_micros)} a month (at 100 %: ` +
                        `${p.budget_action.replace('_', ' ')})`
                      : '',
                  ]
                    .filter(Boolean)
                    .join(' · ') || 'none',
              },
              {
                title: 'Add a member',
                cell: (p) =>
                  p.owner_id !== me
                    ? '-'
                    : (() => {
                        const user = h('input', {
                          'aria-label': `user to add to ${p.name}`,
                          placeholder: 'user name or ID',
                          required: true,
                        });
                        const role = h(
                          'select',
                          {'aria-label': `role in ${p.name}`},
                          h('option', {value: 'member'}, 'member'),
                          h('option', {value: 'viewer'}, 'viewer'),
                        );
                        return h(
                          'form',
                          {
                            class: 'inline',
                            onsubmit: (event) => {
                              event.preventDefault();
                              act(() =>
                                api(
                                  'PUT',
                                  `/v1/projects/${p.id}/members/` +
                                    encodeURIComponent(user.value.trim()),
                                  {role: role.value},
                                ),
                              );
                            },
                          },
                          user,
                          role,
                          h('button', {type: 'submit'}, 'Add'),
                        );
                      })(),
              },
              {
                title: '',
                cell: (p) =>
                  p.owner_id === me
                    ? dangerButton('Delete', () => act(() => api('DELETE', '/v1/projects/' + p.id)))
                    : dangerButton('Leave', () =>
                        act(() => api('DELETE', `/v1/projects/${p.id}/members/${me}`)),
                      ),
              },
            ],
            knownProjects,
            {class: 'projects'},
          ),
    );
  };
  await refreshProjects();
  show();
  const name = h('input', {
    id: 'project-name',
    required: true,
    maxlength: 64,
    placeholder: 'name',
    'aria-label': 'project name',
  });
  const create = h(
    'form',
    {
      class: 'inline',
      onsubmit: (event) => {
        event.preventDefault();
        act(async () => {
          await api('POST', '/v1/projects', {name: name.value.trim()});
          name.value = '';
        });
      },
    },
    name,
    h('button', {type: 'submit'}, 'Create project'),
  );
  return [
    title('Projects'),
    h(
      'p',
      {class: 'hint'},
      "A project's pods, volumes and endpoints are seen by its members and viewers, run by " +
        'its members, and billed to its owner. The same: suanli projects.',
    ),
    list,
    h('h2', {}, 'New project'),
    create,
    limitsSection,
    out,
  ];
}
