// The sign-in page: an API token, checked against GET /v1/users/me before it is kept.
import {api} from '../api.js';
import {errorBox, h, title} from '../dom.js';
import {keepSignIn, takeSignOutReason} from '../session.js';

export function signIn() {
  const input = h('input', {
    id: 'token',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    placeholder: 'sl_...',
    'aria-describedby': 'token-help',
  });
  const status = h('p', {role: 'status'}, takeSignOutReason());
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const me = await api('GET', '/v1/users/me', undefined, input.value.trim());
          keepSignIn(input.value.trim(), me.role);
          location.hash = '#/gpus';
        } catch (error) {
          status.replaceChildren(errorBox(error));
        }
      },
    },
    h('label', {for: 'token'}, 'API token'),
    input,
    h(
      'p',
      {id: 'token-help', class: 'hint'},
      'An admin creates your user and first token (suanli users create NAME); ',
      'make more with suanli tokens create. The token stays in this browser only.',
    ),
    h('button', {type: 'submit'}, 'Sign in'),
    status,
  );
  return [title('Sign in'), form];
}
