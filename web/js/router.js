// The route table (a pattern of the address's hash, the page that builds it; what the pattern
// captures is passed to the page) and route(), which shows the page the address asks for.
import {destroyCharts} from './charts.js';
import {errorBox, title} from './dom.js';
import {admin} from './pages/admin.js';
import {advisor} from './pages/advisor.js';
import {billing} from './pages/billing.js';
import {deploy} from './pages/deploy.js';
import {endpoints} from './pages/endpoints.js';
import {events} from './pages/events.js';
import {gpus} from './pages/gpus.js';
import {pod, pods} from './pages/pods.js';
import {projects} from './pages/projects.js';
import {signIn} from './pages/sign-in.js';
import {volumes} from './pages/volumes.js';
import {refreshProjects} from './projects.js';
import {isAdmin, token} from './session.js';
import {isShown, setRouter, startView} from './view.js';

const routes = [
  [/^#\/gpus$/, gpus],
  [/^#\/advisor$/, advisor],
  [/^#\/deploy(?:\?(.*))?$/, deploy], // ?gpu=...&count=...: the advisor's "Deploy this"
  [/^#\/pods$/, pods],
  [/^#\/pods\/([\w-]+)$/, pod],
  [/^#\/endpoints$/, endpoints],
  [/^#\/volumes$/, volumes],
  [/^#\/projects$/, projects],
  [/^#\/billing$/, billing],
  [/^#\/events$/, events],
  [/^#\/admin$/, admin],
];

const view = document.getElementById('view');

// Shows the page for the address (the sign-in page when signed out; GPUs for an unknown address).
export async function route() {
  const generation = startView(); // stops the polling of the view shown until now
  destroyCharts();
  const signedIn = token() !== '';
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('admin-link').hidden = !isAdmin();
  if (!signedIn || location.hash === '#/sign-in') {
    if (signedIn) {
      location.hash = '#/gpus';
      return;
    }
    view.replaceChildren(...signIn());
    return;
  }
  await refreshProjects();
  const [pattern, build] = routes.find(([p]) => p.test(location.hash)) || [null, null];
  if (!build) {
    location.hash = '#/gpus';
    return;
  }
  for (const link of document.querySelectorAll('#nav a')) {
    link.toggleAttribute('aria-current', location.hash.startsWith(link.getAttribute('href')));
  }
  let shown;
  try {
    shown = [await build(...location.hash.match(pattern).slice(1))].flat();
  } catch (error) {
    shown = [title('Something went wrong'), errorBox(error)];
  }
  if (!isShown(generation)) return; // another view was asked for meanwhile
  view.replaceChildren(...shown);
  view.focus();
}

setRouter(route);
