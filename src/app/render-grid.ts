/**
 * The HTML of a datagrid component: its search box, its table (sort links on the headers, each
 * row's key a link), its pager ("Rows 101–200 of 1,234"), its CSV link and its error. Without
 * JavaScript: every state is a link or a GET form. On a narrow screen each row reads as a card.
 * @module
 */
import type { Column } from '../schema/index.js';
import { escapeHtml, screenHref, type RenderContext } from './html.js';
import type { ResolvedDatagrid } from './types.js';

const COUNT = new Intl.NumberFormat('en-US');

/** Renders a resolved grid. @internal */
export function renderGrid(grid: ResolvedDatagrid, context: RenderContext): string {
  const href = (to: string) => escapeHtml(screenHref(context.appBase, to));
  const numeric = grid.columns.map((c) => /^(NUMBER|INTEGER)$/i.test(c.type ?? ''));
  const head = grid.columns
    .map((c, i) => {
      const label = escapeHtml(grid.labels[i] ?? c.name);
      const sorted = grid.sort?.column === i ? grid.sort.direction : null;
      const attributes = `${numeric[i] ? ' class="num"' : ''}${sorted ? ` aria-sort="${sorted}"` : ''}`;
      const to = grid.sortHrefs[i];
      const mark = sorted
        ? `<span class="sort-mark" aria-hidden="true">${sorted === 'ascending' ? '▲' : '▼'}</span>`
        : to
          ? '<span class="sort-mark idle" aria-hidden="true">↕</span>'
          : '';
      return `<th scope="col"${attributes}>${to ? `<a href="${href(to)}">${label}${mark}</a>` : label}</th>`;
    })
    .join('');
  const width = Math.max(grid.columns.length, 1);
  const searched = grid.search !== null && grid.search.value !== '';
  const body =
    grid.rows.length === 0
      ? `<tr><td class="empty" colspan="${width}">${escapeHtml(emptyText(grid, searched))}</td></tr>`
      : grid.rows
          .map((row, r) => {
            const to = grid.rowHrefs[r] ?? null;
            const cells = grid.columns
              .map((c, i) => {
                const text = grid.cells[r]?.[i] ?? '';
                const content =
                  to !== null && i === grid.linkColumn
                    ? `<a class="row-link" href="${href(to)}">${escapeHtml(text === '' ? 'Open' : text)}</a>`
                    : renderCell(row[i], text, c);
                return `<td${numeric[i] ? ' class="num"' : ''} data-label="${escapeHtml(grid.labels[i] ?? c.name)}">${content}</td>`;
              })
              .join('');
            return `<tr${to !== null ? ' class="linked"' : ''}>${cells}</tr>`;
          })
          .join('\n');
  const caption = `${grid.entity}${grid.page > 1 || grid.hasNext ? ` (page ${grid.page})` : ''}`;
  const table = `<div class="table-wrap"><table class="grid"><caption>${escapeHtml(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
  const error = grid.error ? `<p class="grid-error" role="alert">${escapeHtml(grid.error)}</p>` : '';
  const exported = grid.exportHref
    ? `<p class="grid-export"><a href="${escapeHtml(screenHref(context.appBase, grid.exportHref))}" download>Download as CSV</a></p>`
    : '';
  return `<div class="c-grid">${searchForm(grid, context)}${error}${table}${pager(grid, context)}${exported}</div>`;
}

/** What an empty page says: nothing matched the search, nothing on this page, or the grid's empty text. */
function emptyText(grid: ResolvedDatagrid, searched: boolean): string {
  if (grid.error) return 'Nothing to show.';
  if (grid.page > 1) return 'No rows on this page.';
  if (searched) return `Nothing matches “${grid.search!.value}”.`;
  return grid.emptyText;
}

/** The GET form of a searchable grid: the text, the screen's other parameters, a button. */
function searchForm(grid: ResolvedDatagrid, context: RenderContext): string {
  const search = grid.search;
  if (!search) return '';
  const id = `s-${grid.name}`;
  const action = screenHref(context.appBase, `/screens/${context.screen.url}`);
  const kept = search.keep
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const clear =
    search.value !== ''
      ? `<a class="grid-clear" href="${escapeHtml(screenHref(context.appBase, search.clearHref))}">Clear search</a>`
      : '';
  const hint = `<p class="field-hint" id="${escapeHtml(id)}-hint">${escapeHtml(`Finds rows whose ${search.columns.join(', ')} contain the text (capitals count).`)}</p>`;
  return `<form class="grid-search" role="search" method="get" action="${escapeHtml(action)}" aria-label="${escapeHtml(`Search ${grid.entity}`)}"><div class="field"><label for="${escapeHtml(id)}">${escapeHtml(`Search ${grid.entity}`)}</label><div class="grid-search-row"><input type="search" id="${escapeHtml(id)}" name="${escapeHtml(search.param)}" value="${escapeHtml(search.value)}" maxlength="200" aria-describedby="${escapeHtml(id)}-hint">${kept}<button type="submit">Search</button>${clear}</div>${hint}</div></form>`;
}

/** "Rows 101–200 of 1,234" with the links to the pages before and after. */
function pager(grid: ResolvedDatagrid, context: RenderContext): string {
  const first = (grid.page - 1) * grid.pageSize + 1;
  const last = first + grid.rows.length - 1;
  let status: string;
  if (grid.rows.length > 0)
    status =
      grid.total !== null
        ? `Rows ${COUNT.format(first)}–${COUNT.format(last)} of ${COUNT.format(grid.total)}`
        : `Rows ${COUNT.format(first)}–${COUNT.format(last)}`;
  else if (grid.page > 1 && grid.total !== null)
    status = `No rows here; the list has ${COUNT.format(grid.total)}`;
  else return '';
  if (!grid.hasPrevious && !grid.hasNext) return `<p class="pager"><span class="status">${status}</span></p>`;
  const prev = grid.previousHref
    ? `<a rel="prev" href="${escapeHtml(screenHref(context.appBase, grid.previousHref))}">Previous</a>`
    : '<span class="disabled" aria-disabled="true">Previous</span>';
  const next = grid.nextHref
    ? `<a rel="next" href="${escapeHtml(screenHref(context.appBase, grid.nextHref))}">Next</a>`
    : '<span class="disabled" aria-disabled="true">Next</span>';
  return `<nav class="pager" aria-label="${escapeHtml(`Pages of ${grid.entity}`)}">${prev}<span class="status">${status}</span>${next}</nav>`;
}

function renderCell(value: unknown, text: string, column: Column): string {
  if (value === null || value === undefined) return '';
  if (column.string?.is_url && typeof value === 'string' && /^https?:\/\/[^\s]+$/i.test(value)) {
    return `<a href="${escapeHtml(value)}" rel="noopener noreferrer nofollow">${escapeHtml(text)}</a>`;
  }
  return escapeHtml(text);
}
