/**
 * Chart and metric components. (Placeholder while they are built: each shows as a text saying so.)
 * @module
 */
import type { Component } from '../schema/index.js';
import type { AppHost } from './host.js';
import type { ResolvedText, ScreenQuery } from './types.js';

/** Resolves a chart component. @internal */
export function resolveChart(
  _host: AppHost,
  component: Extract<Component, { type: 'chart' }>,
  _query: ScreenQuery,
): Promise<ResolvedText> {
  return Promise.resolve({ type: 'text', name: component.name, heading: false, contents: '' });
}

/** Resolves a metric component. @internal */
export function resolveMetric(
  _host: AppHost,
  component: Extract<Component, { type: 'metric' }>,
  _query: ScreenQuery,
): Promise<ResolvedText> {
  return Promise.resolve({ type: 'text', name: component.name, heading: false, contents: '' });
}
