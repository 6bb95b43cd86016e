/**
 * OpenTelemetry spans of runs and step attempts, through `@opentelemetry/api` only. The package is an
 * optional peer loaded on the first run: without it nothing is recorded and no header is sent. Spans
 * carry names, ids, attempts and statuses, never input or output values.
 * @module
 */
import type * as Otel from '@opentelemetry/api';
import { importOptional } from '../adapters/import-optional.js';
import type { RunError } from './record.js';

type Api = typeof Otel;

/** The attributes of stepwire's spans. @internal */
export const SPAN_ATTRIBUTES = {
  workflow: 'stepwire.workflow',
  runId: 'stepwire.run.id',
  step: 'stepwire.step',
  type: 'stepwire.step.type',
  attempt: 'stepwire.step.attempt',
  item: 'stepwire.step.item',
  status: 'stepwire.status',
  errorCode: 'stepwire.error.code',
  decidedBy: 'stepwire.decision.by',
  approved: 'stepwire.decision.approved',
} as const;

/** How an attempt ended: `retried` failed and another attempt follows. @internal */
export type AttemptStatus = 'succeeded' | 'failed' | 'retried';

/** The span of one step attempt. @internal */
export interface AttemptTrace {
  /** W3C `traceparent` of the attempt's span, for outbound calls; undefined when nothing is traced. */
  readonly traceparent: string | undefined;
  /** Runs `work` with the attempt's span as the active span (where a context manager is registered). */
  within<T>(work: () => T): T;
  /** Ends the span with the attempt's status. */
  end(status: AttemptStatus, error?: RunError): void;
}

/** The span of one run, and the spans of its step attempts below it. @internal */
export interface RunTrace {
  /** W3C `traceparent` of the run's span; undefined when nothing is traced. */
  readonly traceparent: string | undefined;
  /** Starts the span of one attempt of a step (of one item of a for_each step), a child of the run's span. */
  attempt(step: string, type: string, attempt: number, item?: number): AttemptTrace;
  /** Ends the run's span with the run's status. */
  end(status: string, error: RunError | null): void;
}

/** The span of an attempt when nothing is traced. @internal */
export const NO_ATTEMPT: AttemptTrace = { traceparent: undefined, within: (work) => work(), end: () => {} };
const NO_TRACE: RunTrace = { traceparent: undefined, attempt: () => NO_ATTEMPT, end: () => {} };

let loading: Promise<Api | undefined> | undefined;
/** The API once the import settled: null when it is not installed. */
let loaded: Api | null | undefined;

/**
 * Starts importing the OpenTelemetry API in the background (once), so the first run does not wait
 * for it; called when an engine is made. @internal
 */
export function preloadTracing(): void {
  void loadApi();
}

/** The OpenTelemetry API, imported once; undefined when it is not installed. */
function loadApi(): Promise<Api | undefined> {
  return (loading ??= importOptional(
    '@opentelemetry/api',
    'tracing',
    () => import('@opentelemetry/api'),
  ).then(
    (module) =>
      (loaded = (module as Partial<Api>).trace ? module : (module as unknown as { default: Api }).default),
    () => {
      loaded = null;
      return undefined;
    },
  ));
}

/**
 * Starts the span of a run: a child of `traceparent` when it is a valid W3C trace context, else of
 * the active context. Without `@opentelemetry/api` it records nothing. At once once the package's
 * import has settled; a promise only while it is still being imported.
 * @internal
 */
export function traceRun(
  workflow: string,
  runId: string,
  traceparent: string | undefined,
  startedAt: number,
): RunTrace | Promise<RunTrace> {
  if (loaded === undefined) return loadApi().then(() => traceRun(workflow, runId, traceparent, startedAt));
  const api = loaded;
  if (!api) return NO_TRACE;
  const parent = parentContext(api, traceparent);
  const tracer = api.trace.getTracer('stepwire');
  const base = { [SPAN_ATTRIBUTES.workflow]: workflow, [SPAN_ATTRIBUTES.runId]: runId };
  const span = tracer.startSpan(`run ${workflow}`, { attributes: base, startTime: startedAt }, parent);
  // No tracer is registered (the API's no-op one answered) and no caller's trace goes on: the
  // attempts' spans would record nothing and carry no context, so none is started.
  if (!span.isRecording() && !api.isSpanContextValid(span.spanContext())) return new UntracedRun(span);
  return {
    ...attemptsUnder(api, api.trace.setSpan(parent, span), base),
    traceparent: formatTraceparent(api, span),
    end: (status, error) => endSpan(api, span, status, error),
  };
}

/**
 * The trace of a durable run on a worker: attempt spans become children of the run's span, named by
 * the `traceparent` kept in its record, so a run's spans join up whichever process executes its steps.
 * Ending it does nothing: the run's span belongs to the process that started the run. Records
 * nothing until the OpenTelemetry API has been imported (see {@link preloadTracing}).
 * @internal
 */
export function traceJoin(workflow: string, runId: string, traceparent: string | undefined): RunTrace {
  const api = loaded;
  if (!api || traceparent === undefined) return NO_TRACE;
  const base = { [SPAN_ATTRIBUTES.workflow]: workflow, [SPAN_ATTRIBUTES.runId]: runId };
  return { ...attemptsUnder(api, parentContext(api, traceparent), base), traceparent, end: () => {} };
}

/**
 * Records a decision on an approval as a span `decision <step>` in the run's trace (a child of the
 * span its `traceparent` names): who decided (an id) and whether they approved, never a comment or
 * answers. Records nothing without the OpenTelemetry API or a trace. @internal
 */
export function traceDecision(
  workflow: string,
  runId: string,
  traceparent: string | undefined,
  step: string,
  by: string,
  approved: boolean,
  outcome: 'success' | 'failure' | 'denied',
): void {
  const api = loaded;
  if (!api || traceparent === undefined) return;
  const attributes = {
    [SPAN_ATTRIBUTES.workflow]: workflow,
    [SPAN_ATTRIBUTES.runId]: runId,
    [SPAN_ATTRIBUTES.step]: step,
    [SPAN_ATTRIBUTES.decidedBy]: by,
    [SPAN_ATTRIBUTES.approved]: approved,
  };
  const span = api.trace
    .getTracer('stepwire')
    .startSpan(`decision ${step}`, { attributes }, parentContext(api, traceparent));
  endSpan(
    api,
    span,
    outcome === 'success' ? 'succeeded' : 'failed',
    outcome === 'success' ? null : { code: outcome, message: outcome },
  );
}

/** A run's span that records nothing: its attempts start none; ending it ends the span. */
class UntracedRun implements RunTrace {
  readonly traceparent = undefined;
  readonly #span: Otel.Span;

  constructor(span: Otel.Span) {
    this.#span = span;
  }

  attempt(): AttemptTrace {
    return NO_ATTEMPT;
  }

  end(): void {
    this.#span.end();
  }
}

/** Starts attempt spans as children of `runContext`. */
function attemptsUnder(
  api: Api,
  runContext: Otel.Context,
  base: Record<string, string>,
): Pick<RunTrace, 'attempt'> {
  const tracer = api.trace.getTracer('stepwire');
  return {
    attempt(step, type, attempt, item) {
      const attributes = {
        ...base,
        [SPAN_ATTRIBUTES.step]: step,
        [SPAN_ATTRIBUTES.type]: type,
        [SPAN_ATTRIBUTES.attempt]: attempt,
        ...(item === undefined ? {} : { [SPAN_ATTRIBUTES.item]: item }),
      };
      const child = tracer.startSpan(`step ${step}`, { attributes }, runContext);
      const own = api.trace.setSpan(runContext, child);
      return {
        traceparent: formatTraceparent(api, child),
        within: (work) => api.context.with(own, work),
        end: (status, error) => endSpan(api, child, status, error ?? null),
      };
    },
  };
}

/** An error code as the built-in ones are: a short identifier (`script_error`, `limit_exceeded`, `http.404`). */
const SAFE_CODE = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;

function endSpan(api: Api, span: Otel.Span, status: string, error: RunError | null): void {
  span.setAttribute(SPAN_ATTRIBUTES.status, status);
  if (error) {
    // Only the code (and the failing step's name): messages may quote input values (a validation
    // message shows the value it refused), and spans never hold values. A code an action made that is
    // no identifier (it could hold data too) is recorded as `error`.
    const code = SAFE_CODE.test(error.code) ? error.code : 'error';
    span.setAttribute(SPAN_ATTRIBUTES.errorCode, code);
    const message = error.step === undefined ? code : `step "${error.step}" failed: ${code}`;
    span.setStatus({ code: api.SpanStatusCode.ERROR, message });
  } else if (status === 'succeeded') {
    span.setStatus({ code: api.SpanStatusCode.OK });
  }
  span.end();
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The context a run's span starts in: the remote parent of `traceparent`, else the active one. */
function parentContext(api: Api, traceparent: string | undefined): Otel.Context {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent.trim());
  // Lowercase hex only (W3C Trace Context: a header with uppercase is ignored, as OpenTelemetry's
  // propagator does). Version ff is invalid; version 00 has exactly four fields; later versions may add fields.
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined))
    return api.context.active();
  const spanContext = {
    traceId: match[2]!,
    spanId: match[3]!,
    traceFlags: Number.parseInt(match[4]!, 16),
    isRemote: true,
  };
  if (!api.isSpanContextValid(spanContext)) return api.context.active();
  return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
}

function formatTraceparent(api: Api, span: Otel.Span): string | undefined {
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!api.isSpanContextValid({ traceId, spanId, traceFlags })) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
