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
    return performRequest(data as Parameters<typeof performRequest>[0], options);
  },
};
