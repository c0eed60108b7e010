// The view shown in <main>: which one it is (a generation, counted by the router), the polling
// that keeps it fresh while it is shown, and showing it again (after a change a page made).

let viewGeneration = 0; // the views shown so far

// A new view is being shown: the polling of the one shown until now stops. Its generation.
export function startView() {
  return ++viewGeneration;
}

// Whether the view of `generation` is still the one asked for.
export function isShown(generation) {
  return generation === viewGeneration;
}

// Renders `build()` now (or after `wait` ms) and again every `ms` while the view is shown. A view
// built after its user has already moved on (its API calls were slow) polls nothing: the view
// generation has changed.
export function poll(ms, build, wait = 0) {
  const generation = viewGeneration;
  const run = async () => {
    if (generation !== viewGeneration) return;
    await build();
    if (generation === viewGeneration) setTimeout(run, ms);
  };
  if (wait) setTimeout(run, wait);
  else run();
}

// The router (router.js) registers itself here, so that pages and the API client can show the
// current view again without importing the router, which imports them.
let router = () => {};
export function setRouter(show) {
  router = show;
}

// Shows the view the address asks for again (or the sign-in page, once signed out).
export function route() {
  return router();
}
