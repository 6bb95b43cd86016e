import type { RequestData, StepOf } from '../../schema/index.js';
import { performRequest } from '../../request/index.js';
import { stepRetryPolicy } from '../../retry/index.js';
import type { StepType } from './types.js';

/** Methods a request may repeat safely; only these are retried. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * The `request` step type: sends the HTTP request of `request_data`. It applies the step's `retry`
 * itself, per request and only for idempotent methods. @internal
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
    if (retry && IDEMPOTENT.has(method)) options.retry = stepRetryPolicy(retry);
    const traced = withTraceparent(data as RequestData, context.run.traceparent);
    return performRequest(traced as Parameters<typeof performRequest>[0], options);
  },
};

/**
 * The request with the step attempt's `traceparent` header added, so the server joins the run's
 * trace; a `traceparent` the step sets itself wins. Headers that are not an object are left for the
 * request's own checks to report.
 */
function withTraceparent(data: RequestData, traceparent: string | undefined): RequestData {
  const headers: unknown = data?.headers;
  if (
    traceparent === undefined ||
    (headers != null && (typeof headers !== 'object' || Array.isArray(headers)))
  )
    return data;
  const own = (headers ?? {}) as Record<string, unknown>;
  if (Object.keys(own).some((name) => name.toLowerCase() === 'traceparent')) return data;
  return { ...data, headers: { ...(own as Record<string, string>), traceparent } };
}
