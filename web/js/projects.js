// The projects the signed-in person is a member of, as the switcher in the bar lists them, and the
// one chosen there: whose pods the Pods list shows, where Deploy deploys, whose volumes are listed.
import {api} from './api.js';
import {h} from './dom.js';
import {savedProject} from './session.js';

let knownProjects = [];

export function projectsKnown() {
  return knownProjects;
}

// The chosen project's id, or '' for one's own (also when the saved one is no longer a project).
export function currentProject() {
  const id = savedProject();
  return knownProjects.some((p) => p.id === id) ? id : '';
}

export function projectName(id) {
  return (knownProjects.find((p) => p.id === id) || {name: id}).name;
}

// Fetches the projects again and fills the switcher with them.
export async function refreshProjects() {
  knownProjects = (await api('GET', '/v1/projects').catch(() => ({projects: []}))).projects;
  const switcher = document.getElementById('project-switcher');
  const chosen = currentProject();
  switcher.replaceChildren(
    h('option', {value: ''}, 'Just me'),
    ...knownProjects.map((p) =>
      h('option', {value: p.id, selected: p.id === chosen ? '' : undefined}, `Project ${p.name}`),
    ),
  );
}
