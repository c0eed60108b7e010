// The suanli console: a client of the public /v1 API and nothing else, so anything done here can be
// done with the CLI or a script. Plain ES modules, no build step (docs/console.md names them). Text
// from the server is only ever set as textContent (never parsed as HTML). The API token lives in
// localStorage, is sent only in the Authorization header, and never appears in a URL.
import {route} from './router.js';
import {saveProject, signOut} from './session.js';

document.getElementById('sign-out').addEventListener('click', () => signOut());
document.getElementById('project-switcher').addEventListener('change', (event) => {
  saveProject(event.target.value);
  route();
});
window.addEventListener('hashchange', route);
route();
