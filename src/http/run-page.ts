import { escapeHtml } from '../app/render.js';
import { SCREEN_STYLES } from '../app/styles.js';
import type { RunRecord } from '../engine/record.js';
import { formatMs } from '../pictures/svg.js';

/** What the run page shows besides the record. @internal */
export interface RunPageParts {
  /** The run's timeline, an SVG document. */
  timeline: string;
  /** The graph of the run's workflow, an SVG document; undefined when the workflow is gone. */
  graph: string | undefined;
  /** Path the handler is mounted at, without a trailing slash. */
  basePath: string;
}

/** Seconds between reloads of the page of a run that has not finished. */
const RELOAD_SECONDS = 2;

const PAGE_STYLES = `
main { max-width: none; }
section { margin: 0 0 2rem; }
h2 { margin: 0 0 0.75rem; }
.picture { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
.picture svg { display: block; }
.links { display: flex; gap: 1rem; margin: 0.5rem 0 0; }
td { white-space: nowrap; }
td.error { color: var(--error); white-space: normal; }
summary { cursor: pointer; font-weight: 600; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; overflow-x: auto;
  font-size: 0.875rem; }
`;

/**
 * The page of one run: its timeline and its workflow's graph (inline SVG), a table of its steps and
 * the record as JSON (folded in a `details` element). Plain HTML, every text escaped, no scripts; while the run goes on the page
 * reloads itself every few seconds (a `refresh` meta element).
 * @internal
 */
export function renderRunPage(record: RunRecord, parts: RunPageParts): string {
  const runBase = `${parts.basePath}/runs/${encodeURIComponent(record.id)}`;
  const workflowBase = `${parts.basePath}/workflows/${encodeURIComponent(record.workflow)}`;
  const going = record.finished_at === null;
  const title = `Run of ${record.workflow}`;
  const facts = [
    record.status,
    `run ${record.id}`,
    `started ${record.started_at}`,
    record.finished_at ? `finished ${record.finished_at}` : 'still going',
  ];
  const reload = going ? `\n<meta http-equiv="refresh" content="${RELOAD_SECONDS}">` : '';
  const note = going
    ? `<p class="status">This page reloads every ${RELOAD_SECONDS} seconds while the run goes on.</p>`
    : '';
  const error = record.error
    ? `<p class="form-error" role="alert">${escapeHtml(`${record.error.code}: ${record.error.message}`)}</p>`
    : '';
  const graph =
    parts.graph === undefined
      ? `<p class="status">The workflow "${escapeHtml(record.workflow)}" no longer exists.</p>`
      : `<div class="picture">${parts.graph}</div><p class="links"><a href="${escapeHtml(`${workflowBase}/graph.svg`)}">graph.svg</a></p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">${reload}
<title>${escapeHtml(`${title} · ${record.status}`)}</title>
<style>${SCREEN_STYLES}${PAGE_STYLES}</style>
</head>
<body>
<main>
<section>
<h1>${escapeHtml(title)}</h1>
<p class="status">${escapeHtml(facts.join(' · '))}</p>
${note}${error}
</section>
<section>
<h2>Timeline</h2>
<div class="picture">${parts.timeline}</div>
<p class="links"><a href="${escapeHtml(`${runBase}/timeline.svg`)}">timeline.svg</a><a href="${escapeHtml(runBase)}">record as JSON</a></p>
</section>
<section>
<h2>Workflow</h2>
${graph}
</section>
<section>
<h2>Steps</h2>
${stepsTable(record)}
</section>
<section>
<details>
<summary>The run record as JSON</summary>
<pre>${escapeHtml(JSON.stringify(record, null, 2))}</pre>
</details>
</section>
</main>
</body>
</html>
`;
}

function stepsTable(record: RunRecord): string {
  if (record.steps.length === 0) return '<p class="status">No step has started yet.</p>';
  const rows = record.steps.map((step) => {
    const took =
      step.started_at && step.finished_at
        ? formatMs(Date.parse(step.finished_at) - Date.parse(step.started_at))
        : '';
    const cells = [step.name, step.status, String(step.attempts), step.started_at ?? '', took];
    const error = step.error ? escapeHtml(step.error.message) : '';
    return `<tr>${cells.map((c, i) => `<td${i === 2 ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('')}<td class="error">${error}</td></tr>`;
  });
  const head = ['Step', 'Status', 'Attempts', 'Started', 'Took', 'Error']
    .map((h, i) => `<th scope="col"${i === 2 ? ' class="num"' : ''}>${h}</th>`)
    .join('');
  return `<div class="table-wrap"><table><caption>Steps of run ${escapeHtml(record.id)}</caption><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}
