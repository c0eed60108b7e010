// Building the page: elements, tables, titles and error boxes. Text from the server only ever
// becomes a text node (textContent), never parsed as HTML.
import {exactMoney, money} from './format.js';

// h('a', {href: '#/x', class: 'y'}, 'text', child...): an element; strings become text nodes.
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

// An amount in cents, every micro-dollar in its tooltip.
export const moneyCell = (micros) => h('span', {title: exactMoney(micros)}, money(micros));

// A button that deletes, terminates or takes something away: one look (red) on every page, so
// that it reads as destructive wherever it is.
export const dangerButton = (text, onclick) =>
  h('button', {type: 'button', class: 'danger', onclick}, text);

export function errorBox(error) {
  return h('p', {class: 'error', role: 'alert'}, error.message || String(error));
}

// A table of `rows`, a column per {title, cell(row), numeric}. options: class (the table's), sort
// ({index, descending}: the column shown sorted) and onSort(index) (the headers become buttons).
// The table comes in a box that scrolls sideways, so that a table wider than a phone scrolls
// there rather than widening the page.
export function table(columns, rows, options = {}) {
  const head = h(
    'tr',
    {},
    columns.map((column, index) => {
      const sorted = options.sort && options.sort.index === index;
      return h(
        'th',
        {
          scope: 'col',
          class: column.numeric ? 'num' : undefined,
          'aria-sort': sorted ? (options.sort.descending ? 'descending' : 'ascending') : undefined,
        },
        options.onSort
          ? h(
              'button',
              {type: 'button', class: 'sort', onclick: () => options.onSort(index)},
              column.title,
            )
          : column.title,
      );
    }),
  );
  const body = rows.map((row) =>
    h(
      'tr',
      {},
      columns.map((column) =>
        h('td', {class: column.numeric ? 'num' : undefined}, column.cell(row)),
      ),
    ),
  );
  return h(
    'div',
    {class: 'table-scroll'},
    h('table', {class: options.class}, h('thead', {}, head), h('tbody', {}, body)),
  );
}

// The page's heading, also the window's title.
export function title(text, ...more) {
  document.title = `${text} · suanli`;
  return h('h1', {}, text, ...more);
}
