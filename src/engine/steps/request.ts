import type { RequestData, StepOf } from '../../schema/index.js';
import { performRequest } from '../../request/index.js';
import { stepRetryPolicy } from '../../retry/index.js';
import type { StepType } from './types.js';

/** Methods a request may repeat safely; only these are retried. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * The `request` step type: sends the HTTP request of `request_data` with the step execution's
 * `Idempotency-Key` (and the attempt's `traceparent`). It applies the step's `retry` itself, per
 * request and only for idempotent methods. @internal
 */
export const REQUEST_STEP: StepType<StepOf<'request'>> = {
  plan(step) {
    return { data: { path: 'request_data', value: step.request_data }, retriesItself: true };
  },

  run(planned, data, context, services) {
    const { limits, security, fetch } = services.options;
    const retry = planned.step.retry;
    const method = ((data as RequestData).method ?? 'GET').toUpperCase();
    const options: Parameters<typeof performRequest>[1] = {
      fetch,
      allowHosts: security.allowHosts,
      signal: context.signal,
      timeouts: { headersMs: limits.requestHeadersTimeoutMs, totalMs: limits.requestTimeoutMs },
      maxResponseBytes: limits.requestMaxResponseBytes,
      maxRedirects: limits.requestMaxRedirects,
    };
    if (security.resolve) options.resolve = security.resolve;
    if (retry && IDEMPOTENT.has(method)) {
      options.retry = stepRetryPolicy(retry);
      if (context.retrying) options.onRetry = context.retrying;
    }
    const sent = withDefaultHeaders(data as RequestData, {
      'Idempotency-Key': context.idempotencyKey,
      traceparent: context.run.traceparent,
    });
    return performRequest(sent as Parameters<typeof performRequest>[0], options);
  },
};

/**
 * The request with `defaults` added to its headers: the step execution's `Idempotency-Key` (the
 * same on every retry and redelivery, so the server can tell a repeat from a new request) and the
 * attempt's `traceparent` (so the server joins the run's trace). A header the step sets itself wins,
 * whatever its case; an `undefined` default is left out. Data or headers that are not an object
 * are left for the request's own checks to report.
 */
function withDefaultHeaders(data: RequestData, defaults: Record<string, string | undefined>): RequestData {
  if (!isObject(data)) return data;
  const headers: unknown = data.headers;
  if (headers != null && !isObject(headers)) return data;
  const own = (headers ?? {}) as Record<string, string>;
  const taken = new Set(Object.keys(own).map((name) => name.toLowerCase()));
  const added = Object.entries(defaults).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && !taken.has(entry[0].toLowerCase()),
  );
  if (added.length === 0) return data;
  return { ...data, headers: { ...own, ...Object.fromEntries(added) } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
