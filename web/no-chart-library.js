// Served in place of Chart.js when suanli was built without it (web/node_modules missing): the
// console then shows its tables without charts. scripts/install-deps.sh fetches it; build again.
