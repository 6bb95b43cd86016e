/**
 * The HTML of a datagrid component: its table, its pager, its error.
 * @module
 */
import type { Column } from '../schema/index.js';
import { escapeHtml, screenHref, type RenderContext } from './html.js';
import type { ResolvedDatagrid } from './types.js';

/** Renders a resolved grid. @internal */
export function renderGrid(grid: ResolvedDatagrid, context: RenderContext): string {
  const numeric = grid.columns.map((c) => /^(NUMBER|INTEGER)$/i.test(c.type ?? ''));
  const head = grid.columns
    .map((c, i) => `<th scope="col"${numeric[i] ? ' class="num"' : ''}>${escapeHtml(c.name)}</th>`)
    .join('');
  const body =
    grid.rows.length === 0
      ? `<tr><td class="empty" colspan="${Math.max(grid.columns.length, 1)}">No rows${grid.page > 1 ? ' on this page' : ''}.</td></tr>`
      : grid.rows
          .map(
            (row) =>
              `<tr>${grid.columns.map((c, i) => `<td${numeric[i] ? ' class="num"' : ''}>${renderCell(row[i], c)}</td>`).join('')}</tr>`,
          )
          .join('\n');
  const caption = `${grid.entity}${grid.page > 1 || grid.hasNext ? ` (page ${grid.page})` : ''}`;
  const table = `<div class="table-wrap"><table><caption>${escapeHtml(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
  const error = grid.error ? `<p class="grid-error" role="alert">${escapeHtml(grid.error)}</p>` : '';
  let pager = '';
  if (grid.hasPrevious || grid.hasNext) {
    const prev = grid.previousHref
      ? `<a rel="prev" href="${escapeHtml(screenHref(context.appBase, grid.previousHref))}">Previous</a>`
      : '<span class="disabled" aria-disabled="true">Previous</span>';
    const next = grid.nextHref
      ? `<a rel="next" href="${escapeHtml(screenHref(context.appBase, grid.nextHref))}">Next</a>`
      : '<span class="disabled" aria-disabled="true">Next</span>';
    pager = `<nav class="pager" aria-label="${escapeHtml(`Pages of ${grid.entity}`)}">${prev}<span class="status" aria-current="page">Page ${grid.page}</span>${next}</nav>`;
  }
  return `<div class="c-grid">${error}${table}${pager}</div>`;
}

function renderCell(value: unknown, column: Column): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (column.string?.is_url && typeof value === 'string' && /^https?:\/\/[^\s]+$/i.test(value)) {
    return `<a href="${escapeHtml(value)}" rel="noopener noreferrer nofollow">${escapeHtml(text)}</a>`;
  }
  return escapeHtml(text);
}
