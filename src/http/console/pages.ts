/**
 * The console's pages, rendered on the server: plain HTML, every value escaped, complete without
 * JavaScript. The run page names its event stream so that the console's script can keep it live.
 * @module
 */
import type { QueueJobsPage } from '../../adapters/queue-jobs.js';
import type { AuditPage } from '../../adapters/types.js';
import type { Approval } from '../../engine/waits/approvals.js';
import type { StoredTrigger } from '../../engine/triggers.js';
import { formatMs } from '../../pictures/svg.js';
import type { RunRecord, RunSummary, Workflow } from '../../schema/index.js';
import { RUN_STATUSES } from '../../schema/run-record.js';
import { consolePage, esc, shown, table, type PageFrame } from './layout.js';

/** Filters of the runs page, as the query string gives them. @internal */
export interface RunFilters {
  workflow?: string | undefined;
  status?: string | undefined;
  initiator?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

/** What the runs page shows. @internal */
export interface RunsView {
  runs: RunSummary[];
  filters: RunFilters;
  /** Where the next page starts. */
  next?: string | undefined;
  /** Runs per status among the latest `countLimit` runs (of the workflow) that match the other filters. */
  counts: Record<string, number>;
  countLimit: number;
  workflows: string[];
  /** A notice to show above the list (what a bulk action did). */
  notice?: string | undefined;
}

const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

/** A link to a console path. */
function link(frame: PageFrame, path: string, text: string): string {
  return `<a href="${esc(frame.base + path)}">${esc(text)}</a>`;
}

const runPath = (id: string) => `/console/runs/${encodeURIComponent(id)}`;
const workflowPath = (name: string) => `/console/workflows/${encodeURIComponent(name)}`;

/** How long a run or step took, or how long it has gone on. */
function took(started: string | null, finished: string | null): string {
  if (!started) return '';
  const end = finished ? Date.parse(finished) : Date.now();
  const ms = end - Date.parse(started);
  return Number.isFinite(ms) ? formatMs(Math.max(0, ms)) : '';
}

function initiatorText(run: { initiator?: { id: string; kind: string } | undefined }): string {
  return run.initiator ? `${run.initiator.kind}:${run.initiator.id}` : 'host';
}

/** The query string of the runs page with these filters (and more fields). */
export function runsQuery(filters: RunFilters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...filters, ...extra }))
    if (typeof value === 'string' && value !== '') params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A table of run summaries. */
function runsTable(frame: PageFrame, runs: readonly RunSummary[], caption: string, empty: string): string {
  return table(
    caption,
    ['Run', 'Workflow', 'Status', 'Started', 'Took', 'Started by', 'Error'],
    runs.map((run) => [
      link(frame, runPath(run.id), run.id),
      link(frame, workflowPath(run.workflow), run.workflow),
      esc(run.status),
      esc(run.started_at),
      esc(took(run.started_at, run.finished_at)),
      esc(initiatorText(run)),
      run.error
        ? `<span class="error">${esc(shown(`${run.error.code}: ${run.error.message}`, 300))}</span>`
        : '',
    ]),
    empty,
  );
}

/** The runs page: filters, counts by status, a page of runs, bulk actions. @internal */
export function renderRuns(frame: PageFrame, view: RunsView): string {
  const f = view.filters;
  const option = (value: string, label: string, current: string | undefined) =>
    `<option value="${esc(value)}"${current === value ? ' selected' : ''}>${esc(label)}</option>`;
  const workflowOptions = [
    option('', 'any', f.workflow),
    ...view.workflows.map((w) => option(w, w, f.workflow)),
  ];
  if (f.workflow && !view.workflows.includes(f.workflow))
    workflowOptions.push(option(f.workflow, f.workflow, f.workflow));
  const statusOptions = [option('', 'any', f.status), ...RUN_STATUSES.map((s) => option(s, s, f.status))];
  const filters = `<form class="filters" method="get" action="${esc(`${frame.base}/console/runs`)}" role="search" aria-label="Filter runs">
<p><label for="f-workflow">Workflow</label><select id="f-workflow" name="workflow">${workflowOptions.join('')}</select></p>
<p><label for="f-status">Status</label><select id="f-status" name="status">${statusOptions.join('')}</select></p>
<p><label for="f-initiator">Started by</label><input id="f-initiator" name="initiator" type="text" value="${esc(f.initiator ?? '')}" placeholder="a principal id"></p>
<p><label for="f-since">Started after</label><input id="f-since" name="since" type="text" value="${esc(f.since ?? '')}" placeholder="2026-01-31T00:00Z"></p>
<p><label for="f-until">Started before</label><input id="f-until" name="until" type="text" value="${esc(f.until ?? '')}"></p>
<p><button type="submit">Filter</button></p>
</form>`;
  const counted = `Of the latest ${view.countLimit.toLocaleString('en')} runs${f.workflow ? ` of ${f.workflow}` : ''}${f.since || f.until ? ' started in that time' : ''}`;
  const counts = `<p class="status">${esc(counted)}:</p><ul class="counts" aria-label="${esc(`Runs by status, ${counted.toLowerCase()}`)}">${RUN_STATUSES.map(
    (status) => {
      const text = `${status}: ${view.counts[status] ?? 0}`;
      return `<li>${link(frame, `/console/runs${runsQuery({ ...f, status })}`, text)}</li>`;
    },
  ).join('')}</ul>`;
  const pager = view.next
    ? `<p class="pager"><a rel="next" href="${esc(`${frame.base}/console/runs${runsQuery(f, { after: view.next })}`)}">Older runs</a></p>`
    : '';
  const notice = view.notice ? `<p class="status" role="status">${esc(view.notice)}</p>` : '';
  const bulk = bulkForm(frame, f);
  return consolePage(
    frame,
    'Runs',
    `<h1>Runs</h1>
${notice}${filters}
${counts}
${runsTable(frame, view.runs, 'Runs, newest first', 'No run matches.')}
${pager}
<section><h2>Act on every run that matches</h2>${bulk}</section>`,
    { current: '/console/runs' },
  );
}

/** The bulk form: cancel or retry the runs of a workflow and status, started in a time span. */
function bulkForm(frame: PageFrame, f: RunFilters): string {
  return `<form method="post" action="${esc(`${frame.base}/console/runs/bulk`)}">${csrf(frame)}
<input type="hidden" name="workflow" value="${esc(f.workflow ?? '')}">
<input type="hidden" name="status" value="${esc(f.status ?? '')}">
<input type="hidden" name="started_after" value="${esc(f.since ?? '')}">
<input type="hidden" name="started_before" value="${esc(f.until ?? '')}">
<p class="status">Workflow ${esc(f.workflow || 'any')}, status ${esc(f.status || 'any')}${f.since ? `, started after ${esc(f.since)}` : ''}${f.until ? `, started before ${esc(f.until)}` : ''}. You see how many runs it is before anything is done.</p>
<p><button type="submit" name="action" value="cancel">Cancel these runs…</button> <button type="submit" name="action" value="retry">Retry these runs…</button></p>
</form>`;
}

/** The form token of the session, as a hidden field. */
function csrf(frame: PageFrame): string {
  return frame.session ? `<input type="hidden" name="_csrf" value="${esc(frame.session.csrf)}">` : '';
}

/** What the bulk confirmation page shows. @internal */
export interface BulkConfirm {
  action: 'cancel' | 'retry';
  filter: Record<string, string>;
  count: number;
  runs: string[];
}

/** The page that says how many runs a bulk action would touch, with the form that does it. @internal */
export function renderBulkConfirm(frame: PageFrame, confirm: BulkConfirm): string {
  const fields = Object.entries(confirm.filter)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');
  const described = Object.entries(confirm.filter)
    .map(([k, v]) => `<li>${esc(k)}: ${esc(v)}</li>`)
    .join('');
  const verb = confirm.action === 'cancel' ? 'Cancel' : 'Retry';
  const list = confirm.runs
    .slice(0, 20)
    .map((id) => `<li>${link(frame, runPath(id), id)}</li>`)
    .join('');
  const form =
    confirm.count === 0
      ? `<p>${link(frame, '/console/runs', 'Back to the runs')}</p>`
      : `<form method="post" action="${esc(`${frame.base}/console/runs/bulk`)}">${csrf(frame)}${fields}
<input type="hidden" name="action" value="${esc(confirm.action)}"><input type="hidden" name="confirm" value="${confirm.count}"><input type="hidden" name="runs" value="${esc(confirm.runs.join(','))}">
<p><button type="submit" class="${confirm.action === 'cancel' ? 'danger' : ''}">${esc(`${verb} ${confirm.count} run${confirm.count === 1 ? '' : 's'}`)}</button> ${link(frame, '/console/runs', 'Back')}</p>
</form>`;
  return consolePage(
    frame,
    `${verb} runs`,
    `<h1>${esc(verb)} runs</h1>
<p role="status"><strong>${confirm.count}</strong> run${confirm.count === 1 ? '' : 's'} match${confirm.count === 1 ? 'es' : ''}:</p>
<ul>${described || '<li>every run</li>'}</ul>
${list ? `<ul>${list}</ul>${confirm.runs.length > 20 ? `<p class="status">and ${confirm.runs.length - 20} more</p>` : ''}` : ''}
${form}`,
    { current: '/console/runs' },
  );
}

/** What the run page shows besides the record. @internal */
export interface RunView {
  record: RunRecord;
  timeline: string;
  /** The workflow's graph, or why there is none. */
  graph: { svg: string } | { missing: string };
  notice?: string | undefined;
}

/** The page of one run. @internal */
export function renderRun(frame: PageFrame, view: RunView): string {
  const r = view.record;
  const going = !FINAL.has(r.status);
  const facts = [
    `status ${r.status}`,
    `started ${r.started_at}`,
    r.finished_at ? `finished ${r.finished_at}` : 'still going',
    `took ${took(r.started_at, r.finished_at)}`,
    `started by ${initiatorText(r)}`,
  ];
  const extra: string[] = [];
  if (r.retry_of) extra.push(`retries ${link(frame, runPath(r.retry_of), r.retry_of)}`);
  if (r.parent_run_id) extra.push(`child of ${link(frame, runPath(r.parent_run_id), r.parent_run_id)}`);
  const error = r.error
    ? `<div class="form-error" role="alert">${esc(`${r.error.code}: ${shown(r.error.message, 4000)}`)}${r.error.step ? ` (step ${esc(r.error.step)})` : ''}</div>`
    : '';
  const graph =
    'svg' in view.graph
      ? `<div class="picture" tabindex="0" role="region" aria-label="Workflow graph">${view.graph.svg}</div>`
      : `<p class="status">${esc(view.graph.missing)}</p>`;
  const live = going
    ? `<p class="status" id="live-note">This run goes on: reload the page to see where it is${frame.base === '' ? '' : ''} (with JavaScript it follows the run by itself).</p>`
    : '';
  const events = `${frame.base}/runs/${encodeURIComponent(r.id)}/events`;
  const main = `<div id="run-live" data-run-events="${esc(events)}" data-run-final="${going ? 'false' : 'true'}">
<h1>Run of ${link(frame, workflowPath(r.workflow), r.workflow)}</h1>
<p class="status">${esc(`run ${r.id}`)}${extra.length ? ` · ${extra.join(' · ')}` : ''}</p>
<p class="status" id="run-status">${esc(facts.join(' · '))}</p>
${view.notice ? `<p role="status">${esc(view.notice)}</p>` : ''}${live}${error}
<section><h2>Timeline</h2><div class="picture" tabindex="0" role="region" aria-label="Timeline">${view.timeline}</div></section>
<section><h2>Steps</h2>${stepsOf(frame, r)}</section>
<section><h2>Input and output</h2>
<h3>Input</h3><pre>${esc(shown(r.input, 20_000))}</pre>
<h3>Output</h3><pre>${esc(shown(r.output, 20_000))}</pre></section>
<section><h2>Workflow</h2>${graph}</section>
</div>
<section><h2>Actions</h2><div class="actions">${actions(frame, r)}</div></section>
<p>${link(frame, `/runs/${encodeURIComponent(r.id)}`, 'The run record as JSON')}</p>`;
  return consolePage(frame, `Run ${r.id} · ${r.status}`, main, { current: '/console/runs', script: going });
}

/** The steps: status, attempts, times, error, wait, output (folded). */
function stepsOf(frame: PageFrame, r: RunRecord): string {
  if (r.steps.length === 0) return '<p class="status">No step has started yet.</p>';
  const rows = r.steps.map((s) => {
    const wait = s.wait
      ? s.wait.kind === 'approval'
        ? link(frame, `/approvals/${encodeURIComponent(s.wait.id)}`, `approval ${s.wait.id}`)
        : s.wait.kind === 'run'
          ? link(frame, runPath(s.wait.id), `child run ${s.wait.id}`)
          : esc(`${s.wait.kind}${s.wait.due_at ? ` until ${s.wait.due_at}` : ''}`)
      : '';
    const items = s.items
      ? esc(
          `${s.items.succeeded} of ${s.items.total} items succeeded, ${s.items.failed} failed, ${s.items.skipped} skipped`,
        )
      : '';
    const output =
      s.output === null || s.output === undefined
        ? ''
        : `<details><summary>Output</summary><pre>${esc(shown(s.output))}</pre></details>`;
    const logs = s.logs?.length
      ? `<details><summary>Logs (${s.logs.length})</summary><pre>${esc(shown(s.logs.join('\n')))}</pre></details>`
      : '';
    return [
      esc(s.name),
      esc(s.status),
      esc(String(s.attempts)),
      esc(s.started_at ?? ''),
      esc(took(s.started_at, s.finished_at)),
      s.error ? `<span class="error">${esc(shown(`${s.error.code}: ${s.error.message}`, 1000))}</span>` : '',
      [wait, items, output, logs].filter(Boolean).join('<br>'),
    ];
  });
  return `<div class="steps">${table(
    'Steps in definition order',
    ['Step', 'Status', 'Attempts', 'Started', 'Took', 'Error', 'Wait, items, output'],
    rows,
    '',
  )}</div>`;
}

/** Cancel while the run goes on; retry (from a step) once it has ended. */
function actions(frame: PageFrame, r: RunRecord): string {
  const base = `${frame.base}${runPath(r.id)}`;
  const parts: string[] = [];
  if (!FINAL.has(r.status))
    parts.push(`<form method="post" action="${esc(`${base}/cancel`)}">${csrf(frame)}
<p>Stop the run: no further step starts.</p><p><button type="submit" class="danger">Cancel run</button></p></form>`);
  else if (!r.parent_run_id) {
    const options = r.steps
      .map(
        (s) =>
          `<option value="${esc(s.name)}"${r.error?.step === s.name ? ' selected' : ''}>${esc(s.name)}</option>`,
      )
      .join('');
    parts.push(`<form method="post" action="${esc(`${base}/retry`)}">${csrf(frame)}
<p><label for="from-step">Retry from step</label><br><select id="from-step" name="from_step"><option value="">the first step (run it all again)</option>${options}</select></p>
<p class="status">The steps before it keep their outputs; the run uses the definition it ran with.</p>
<p><label for="retry-input">New input (JSON, empty to keep it)</label><br><textarea id="retry-input" name="input" rows="3" cols="40"></textarea></p>
<p><button type="submit">Retry</button></p></form>`);
  }
  return parts.join('') || '<p class="status">Nothing to do on this run.</p>';
}

/** Numbers about a workflow's recent runs. @internal */
export interface WorkflowStats {
  /** Runs looked at (the most recent ones). */
  runs: number;
  finished: number;
  succeeded: number;
  /** Durations of the finished runs, in ms: median and 95th percentile. */
  p50?: number | undefined;
  p95?: number | undefined;
  last?: RunSummary | undefined;
}

/** Success rate and percentiles of a list of run summaries (newest first). @internal */
export function statsOf(runs: readonly RunSummary[]): WorkflowStats {
  const finished = runs.filter((r) => FINAL.has(r.status) && r.finished_at);
  const durations = finished
    .map((r) => Date.parse(r.finished_at!) - Date.parse(r.started_at))
    .filter((ms) => Number.isFinite(ms) && ms >= 0)
    .sort((a, b) => a - b);
  const percentile = (p: number) =>
    durations.length === 0
      ? undefined
      : durations[Math.min(durations.length - 1, Math.ceil((p / 100) * durations.length) - 1)];
  return {
    runs: runs.length,
    finished: finished.length,
    succeeded: finished.filter((r) => r.status === 'succeeded').length,
    p50: percentile(50),
    p95: percentile(95),
    last: runs[0],
  };
}

function rate(stats: WorkflowStats): string {
  return stats.finished === 0 ? '' : `${Math.round((stats.succeeded / stats.finished) * 1000) / 10}%`;
}

const ms = (value: number | undefined) => (value === undefined ? '' : formatMs(value));

/** The workflows: each with its recent runs' numbers. @internal */
export function renderWorkflows(
  frame: PageFrame,
  rows: { workflow: Workflow; stats: WorkflowStats }[],
  window: number,
): string {
  return consolePage(
    frame,
    'Workflows',
    `<h1>Workflows</h1>
<p class="status">Numbers of each workflow's latest ${window} runs; durations of those that ended.</p>
${table(
  'Workflows',
  ['Workflow', 'Steps', 'Runs', 'Succeeded', 'p50', 'p95', 'Last run'],
  rows.map(({ workflow, stats }) => [
    link(frame, workflowPath(workflow.name), workflow.name),
    esc(String(workflow.steps.length)),
    esc(String(stats.runs)),
    esc(rate(stats)),
    esc(ms(stats.p50)),
    esc(ms(stats.p95)),
    stats.last
      ? `${link(frame, runPath(stats.last.id), stats.last.status)} ${esc(stats.last.started_at)}`
      : '',
  ]),
  'No workflow is stored.',
)}`,
    { current: '/console/workflows' },
  );
}

/** One workflow: its graph, numbers and recent runs. @internal */
export function renderWorkflow(
  frame: PageFrame,
  workflow: Workflow,
  graph: string,
  runs: RunSummary[],
  stats: WorkflowStats,
): string {
  const facts = `${stats.runs} recent runs · ${stats.finished} ended · succeeded ${rate(stats) || '—'} · p50 ${ms(stats.p50) || '—'} · p95 ${ms(stats.p95) || '—'}`;
  return consolePage(
    frame,
    `Workflow ${workflow.name}`,
    `<h1>Workflow ${esc(workflow.name)}</h1>
${workflow.description ? `<p>${esc(workflow.description)}</p>` : ''}
<p class="status">${esc(facts)}</p>
<section><h2>Graph</h2><div class="picture" tabindex="0" role="region" aria-label="Workflow graph">${graph}</div></section>
<section><h2>Recent runs</h2>${runsTable(frame, runs.slice(0, 20), `Latest runs of ${workflow.name}`, 'It has not run yet.')}
<p>${link(frame, `/console/runs${runsQuery({ workflow: workflow.name })}`, 'Every run of this workflow')}</p></section>`,
    { current: '/console/workflows' },
  );
}

/** The approvals waiting for the viewer, linking to their pages. @internal */
export function renderApprovals(frame: PageFrame, approvals: readonly Approval[]): string {
  return consolePage(
    frame,
    'Approvals',
    `<h1>Approvals</h1>
${table(
  'Approvals waiting for you',
  ['Approval', 'Workflow', 'Run', 'Step', 'Since', 'Due', 'Approved'],
  approvals.map((a) => [
    `<a href="${esc(`${frame.base}/approvals/${encodeURIComponent(a.id)}`)}">${esc(a.title)}</a>`,
    esc(a.workflow),
    link(frame, runPath(a.run_id), a.run_id),
    esc(a.step),
    esc(a.began_at),
    esc(a.due_at ?? ''),
    esc(`${a.decisions.filter((d) => d.approved).length} of ${a.required}`),
  ]),
  'Nothing waits for your decision.',
)}
<p>${`<a href="${esc(`${frame.base}/approvals`)}">The approvals inbox</a>`}</p>`,
    { current: '/console/approvals' },
  );
}

/** A trigger with when it fires next (schedules) or what starts it. @internal */
export interface TriggerRow {
  trigger: StoredTrigger;
  /** The next slot of a schedule, ISO; null when its cron never fires. */
  next?: string | null;
}

/** The triggers. @internal */
export function renderTriggers(frame: PageFrame, rows: readonly TriggerRow[]): string {
  return consolePage(
    frame,
    'Triggers',
    `<h1>Triggers</h1>
${table(
  'Triggers',
  ['Trigger', 'Type', 'Workflow', 'When', 'Next fire'],
  rows.map(({ trigger: t, next }) => [
    esc(t.name),
    esc(t.type),
    link(frame, workflowPath(t.workflow_name), t.workflow_name),
    esc(
      t.type === 'schedule'
        ? `cron ${t.schedule_data.cron} (${t.schedule_data.timezone ?? 'UTC'})`
        : t.type === 'webhook'
          ? `POST ${frame.base}/hooks/${t.name}`
          : `${t.entity_data.events.join(', ')} rows of ${t.entity_data.entity_name}, every ${t.entity_data.interval_seconds ?? 60} s`,
    ),
    esc(
      t.type === 'schedule'
        ? (next ?? 'never (no such date)')
        : t.type === 'entity'
          ? 'when a row changes'
          : 'when called',
    ),
  ]),
  'No trigger is stored.',
)}`,
    { current: '/console/triggers' },
  );
}

/** The queue: counts by state and the latest jobs, or why there is none. @internal */
export function renderQueue(frame: PageFrame, view: QueueJobsPage | { none: string }): string {
  const body =
    'none' in view
      ? `<p class="status">${esc(view.none)}</p>`
      : `<ul class="counts" aria-label="Jobs by state">${(['waiting', 'delayed', 'active', 'failed'] as const)
          .map((state) => `<li>${esc(`${state}: ${view.counts[state]}`)}</li>`)
          .join('')}</ul>
${table(
  'Latest jobs of each state',
  ['State', 'Run', 'Step', 'Attempt', 'Deliveries retried', 'Made', 'Starts', 'Taken'],
  view.jobs.map((j) => [
    esc(j.state),
    link(frame, runPath(j.job.run), j.job.run),
    esc(
      `${j.job.step === '' ? '(time limit)' : j.job.step}${j.job.item === undefined ? '' : ` item ${j.job.item}`}`,
    ),
    esc(String(j.job.attempt)),
    esc(String(j.retries)),
    esc(j.created_at),
    esc(j.start_after),
    esc(j.started_at ?? ''),
  ]),
  'No job waits, runs or has failed.',
)}`;
  return consolePage(frame, 'Queue', `<h1>Queue</h1>\n${body}`, { current: '/console/queue' });
}

/** A page of the audit log. @internal */
export function renderAudit(frame: PageFrame, page: AuditPage, filters: Record<string, string>): string {
  const input = (name: string, label: string) =>
    `<p><label for="a-${name}">${esc(label)}</label><input id="a-${name}" name="${name}" type="text" value="${esc(filters[name] ?? '')}"></p>`;
  const query = (extra: Record<string, string>) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...filters, ...extra })) if (v) params.set(k, v);
    return params.toString() ? `?${params.toString()}` : '';
  };
  return consolePage(
    frame,
    'Audit log',
    `<h1>Audit log</h1>
<form class="filters" method="get" action="${esc(`${frame.base}/console/audit`)}" role="search" aria-label="Filter the audit log">
${input('action', 'Action')}${input('principal', 'Principal id')}${input('resource', 'Resource')}<p><button type="submit">Filter</button></p></form>
${table(
  'Entries, oldest first',
  ['At', 'Principal', 'Action', 'Resource', 'Outcome', 'Detail'],
  page.entries.map((e) => [
    esc(e.at),
    esc(`${e.principal.kind}:${e.principal.id}`),
    esc(e.action),
    esc(e.resource),
    esc(e.outcome),
    e.detail ? `<code>${esc(shown(JSON.stringify(e.detail), 500))}</code>` : '',
  ]),
  'No entry matches.',
)}
${page.next ? `<p class="pager"><a rel="next" href="${esc(`${frame.base}/console/audit${query({ after: page.next })}`)}">Later entries</a></p>` : ''}`,
    { current: '/console/audit' },
  );
}
