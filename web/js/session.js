// Who is signed in, kept in this browser: the API token (localStorage, sent only in the
// Authorization header, never in a URL), the role (it shows the Admin page's link; the server
// decides what an admin may do) and the project chosen in the bar's switcher.
import {route} from './view.js';

const TOKEN_KEY = 'suanli.token';
const ROLE_KEY = 'suanli.role';
// The project the pods list and Deploy work in; '' for your own.
const PROJECT_KEY = 'suanli.project';

export function token() {
  return localStorage.getItem(TOKEN_KEY) || '';
}

export function isAdmin() {
  return localStorage.getItem(ROLE_KEY) === 'admin';
}

// Keeps a token that GET /v1/users/me accepted, and the role it answered.
export function keepSignIn(accepted, role) {
  localStorage.setItem(TOKEN_KEY, accepted);
  localStorage.setItem(ROLE_KEY, role);
}

// The sign-in page says `reason` (once).
export function signOut(reason) {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(ROLE_KEY);
  localStorage.removeItem(PROJECT_KEY);
  sessionStorage.setItem('suanli.signed-out', reason || 'Signed out.');
  location.hash = '#/sign-in';
  route();
}

// Why the last sign-out happened, said once.
export function takeSignOutReason() {
  const reason = sessionStorage.getItem('suanli.signed-out') || '';
  sessionStorage.removeItem('suanli.signed-out');
  return reason;
}

export function savedProject() {
  return localStorage.getItem(PROJECT_KEY) || '';
}

export function saveProject(id) {
  localStorage.setItem(PROJECT_KEY, id);
}
