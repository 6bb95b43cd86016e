/**
 * The built-in stylesheet of rendered screens, inlined in a `<style>` element (the screens' CSP
 * allows inline styles and nothing else). Plain CSS, no external fonts or images.
 * @internal
 */
export const SCREEN_STYLES = `
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --accent: #0b57d0; --accent-ink: #ffffff; --error: #b42318; --error-soft: #fef3f2; }
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px; line-height: 1.5; color: var(--ink); background: #ffffff; }
body { margin: 0; }
.app-bar { border-bottom: 1px solid var(--line); background: var(--soft); }
.app-bar > div { max-width: 64rem; margin: 0 auto; padding: 0.75rem 1.5rem; }
.app-bar a { color: var(--ink); font-weight: 600; text-decoration: none; }
.app-bar { display: flex; align-items: center; }
.app-bar > div { flex: 1; }
.app-bar .sign-out { display: flex; gap: 0.75rem; align-items: center; padding: 0.5rem 1.5rem; margin: 0; }
.app-bar .sign-out button { margin: 0; }
.app-bar a:hover { text-decoration: underline; }
main { max-width: 64rem; margin: 0 auto; padding: 1.5rem; }
.row { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; margin: 0 0 1.5rem; }
.row > * { flex: 1 1 18rem; min-width: 0; }
.row > .c-button { flex: 0 0 auto; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0; }
h2 { font-size: 1.25rem; line-height: 1.3; margin: 0; }
p { margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
form { border: 1px solid var(--line); border-radius: 8px; padding: 1.25rem; background: #ffffff; max-width: 32rem; }
.field { margin: 0 0 1rem; }
.field label { display: block; font-weight: 600; margin: 0 0 0.25rem; }
.field .required { color: var(--error); }
.field input:not([type="checkbox"]) { display: block; width: 100%; font: inherit; padding: 0.5rem 0.625rem;
  border: 1px solid #8c959f; border-radius: 6px; background: #ffffff; color: inherit; }
.field.checkbox { display: flex; gap: 0.5rem; align-items: center; }
.field.checkbox label { margin: 0; }
.field input[type="checkbox"] { width: 1.125rem; height: 1.125rem; margin: 0; }
.field input[aria-invalid="true"] { border-color: var(--error); border-width: 2px; }
.field-hint { color: var(--muted); font-size: 0.9375rem; margin: 0.25rem 0 0; }
.field-error { color: var(--error); font-size: 0.9375rem; margin: 0.25rem 0 0; }
.form-error { color: var(--error); background: var(--error-soft); border: 1px solid var(--error);
  border-radius: 6px; padding: 0.75rem 1rem; margin: 0 0 1rem; }
.form-error ul { margin: 0.25rem 0 0; padding-left: 1.25rem; }
.form-error a { color: var(--error); }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: 0.5rem 1.125rem;
  border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: var(--accent-ink);
  text-decoration: none; cursor: pointer; }
button:hover, .button:hover { filter: brightness(1.1); }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; font-size: 1.125rem; padding: 0.625rem 0.75rem; }
th, td { text-align: left; padding: 0.5rem 0.75rem; border-top: 1px solid var(--line); }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.empty { color: var(--muted); text-align: center; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 0.75rem 0 0; }
.pager .disabled { color: var(--muted); }
.grid-error { color: var(--error); margin: 0.5rem 0 0; }
.status { color: var(--muted); }
.field select, .field textarea { display: block; width: 100%; font: inherit; padding: 0.5rem 0.625rem;
  border: 1px solid #8c959f; border-radius: 6px; background: #ffffff; color: inherit; }
.field textarea { min-height: 6rem; resize: vertical; }
.field select[aria-invalid="true"], .field textarea[aria-invalid="true"] { border-color: var(--error); border-width: 2px; }
select:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.field-hint code { font-size: 0.875rem; background: var(--soft); padding: 0 0.25rem; border-radius: 4px;
  overflow-wrap: anywhere; }
.ref-search-box { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0 0 0.5rem; }
.ref-search-box .search-label { flex-basis: 100%; font-weight: 400; color: var(--muted); margin: 0; }
.field .ref-search-box input { flex: 1 1 10rem; min-width: 0; width: auto; display: inline-block; }
.ref-search-box button { padding: 0.5rem 0.875rem; }
form.ref-search { border: 0; padding: 0; margin: 0; }
/* grids, charts, metrics and the menu */
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.app-bar { flex-wrap: wrap; }
.app-menu ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0; padding: 0.5rem 1.5rem; }
.app-menu a { font-weight: 500; color: var(--accent); text-decoration: none; padding: 0.25rem 0; display: inline-block; }
.app-menu a[aria-current="page"] { color: var(--ink); font-weight: 700; border-bottom: 3px solid var(--accent); }
form.grid-search { border: 0; padding: 0; margin: 0 0 0.75rem; max-width: none; background: none; }
.grid-search .field { margin: 0; }
.grid-search-row { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
.grid-search-row input[type="search"] { flex: 1 1 12rem; width: auto; display: block; font: inherit;
  padding: 0.5rem 0.625rem; border: 1px solid #8c959f; border-radius: 6px; background: #ffffff; color: inherit; }
th a { color: inherit; text-decoration: none; display: inline-flex; gap: 0.25rem; align-items: baseline; }
th a:hover { text-decoration: underline; }
th[aria-sort] { background: #e7edf3; }
.sort-mark { font-size: 0.75em; color: var(--accent); }
.sort-mark.idle { color: var(--muted); }
tr.linked { position: relative; }
tr.linked:hover { background: #eef3fb; }
a.row-link { font-weight: 600; }
a.row-link::after { content: ""; position: absolute; inset: 0; }
tr.linked td a:not(.row-link) { position: relative; z-index: 1; }
.grid-export { margin: 0.5rem 0 0; }
.c-chart { margin: 0; }
.c-chart figcaption { font-weight: 600; font-size: 1.125rem; margin: 0 0 0.5rem; }
.chart-body { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.chart-body svg.chart { flex: 2 1 20rem; max-width: 100%; height: auto; }
.chart-body .chart-data { flex: 1 1 12rem; }
.swatch { display: inline-block; width: 0.75rem; height: 0.75rem; border-radius: 2px; margin-right: 0.5rem; }
.c-metric dl { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; }
.c-metric dt { color: var(--muted); font-weight: 600; }
.c-metric dd { margin: 0.25rem 0 0; }
.c-metric .metric-value { font-size: 2.25rem; font-weight: 700; line-height: 1.2; font-variant-numeric: tabular-nums; }
@media (max-width: 40rem) {
  main { padding: 1rem; }
  .c-grid .table-wrap { border: 0; overflow: visible; }
  .c-grid table, .c-grid tbody, .c-grid tr, .c-grid td { display: block; width: 100%; }
  .c-grid thead { display: block; }
  .c-grid thead tr { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; border: 0; margin: 0 0 0.5rem; padding: 0; }
  .c-grid thead th { display: block; border: 0; background: none; padding: 0.25rem 0; }
  .c-grid thead:not(:has(a)) { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .c-grid caption { display: block; padding: 0 0 0.5rem; }
  .c-grid tr { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 0.75rem; padding: 0.25rem 0; background: #ffffff; }
  .c-grid tbody tr:nth-child(even) { background: #ffffff; }
  .c-grid td { border: 0; display: grid; grid-template-columns: minmax(6rem, 40%) 1fr; gap: 0.75rem; text-align: left;
    overflow-wrap: anywhere; }
  .c-grid td.num { text-align: left; }
  .c-grid td::before { content: attr(data-label); font-weight: 600; color: var(--muted); }
  .c-grid td.empty { display: block; text-align: center; }
  .c-grid td.empty::before { content: none; }
}
`;
