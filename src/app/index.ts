/**
 * Applications: the runtime that resolves screens, submits forms and computes redirects, and the
 * HTML renderer of screens.
 * @module
 */
export { AppRuntime } from './runtime.js';
export { renderScreen, escapeHtml, type RenderScreenOptions } from './render.js';
export type {
  ScreenQuery,
  ResolvedScreen,
  ResolvedComponent,
  ResolvedText,
  ResolvedForm,
  ResolvedFormItem,
  FormOption,
  FormSearch,
  FormRules,
  ResolvedDatagrid,
  ResolvedButton,
  SubmitResult,
} from './types.js';
