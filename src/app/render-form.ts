/**
 * The HTML of a form component: its items with their labels, hints and errors, its tokens, its
 * submit button.
 * @module
 */
import { escapeHtml, type RenderContext } from './html.js';
import type { ResolvedForm, ResolvedFormItem } from './types.js';

/** Renders a resolved form. @internal */
export function renderForm(form: ResolvedForm, context: RenderContext): string {
  const { screen, appBase } = context;
  const search = new URLSearchParams(Object.entries(screen.query)).toString();
  const action = `${appBase}/screens/${encodeURIComponent(screen.url)}/forms/${encodeURIComponent(form.name)}${search ? `?${search}` : ''}`;
  const prefix = `f-${slug(form.name)}`;
  const ids = form.items.map((_, i) => `${prefix}-${i}`);
  const itemErrors = form.items.flatMap((item, i) =>
    item.error ? [`<li><a href="#${ids[i]}">${escapeHtml(item.error)}</a></li>`] : [],
  );
  let alert = '';
  if (form.error || itemErrors.length > 0) {
    const summary = form.error
      ? `<p>${escapeHtml(form.error)}</p>`
      : `<p>Please correct ${itemErrors.length === 1 ? 'this field' : 'these fields'}:</p>`;
    alert = `<div class="form-error" role="alert" id="${prefix}-error">${summary}${itemErrors.length > 0 ? `<ul>${itemErrors.join('')}</ul>` : ''}</div>`;
  }
  const fields = form.items.map((item, i) => renderItem(item, ids[i]!)).join('');
  const described = alert ? ` aria-describedby="${prefix}-error"` : '';
  const token =
    (form.submission === null
      ? ''
      : `<input type="hidden" name="_submission" value="${escapeHtml(form.submission)}">`) +
    (context.csrf === undefined
      ? ''
      : `<input type="hidden" name="_csrf" value="${escapeHtml(context.csrf)}">`);
  return `<div class="c-form"><form method="post" action="${escapeHtml(action)}" aria-label="${escapeHtml(form.name)}"${described}>${alert}${token}${fields}<button type="submit">${escapeHtml(form.submitLabel)}</button></form></div>`;
}

function renderItem(item: ResolvedFormItem, id: string): string {
  const errorId = `${id}-error`;
  const invalid = item.error ? ` aria-invalid="true" aria-describedby="${errorId}"` : '';
  const error = item.error ? `<p class="field-error" id="${errorId}">${escapeHtml(item.error)}</p>` : '';
  const marker = item.required ? '<span class="required" aria-hidden="true"> *</span>' : '';
  const label = `<label for="${id}">${escapeHtml(item.label)}${marker}</label>`;
  const name = escapeHtml(item.property);
  if (item.type === 'boolean') {
    const checked = item.value !== null && /^(on|true|1|yes)$/i.test(item.value.trim()) ? ' checked' : '';
    return `<div class="field checkbox"><input type="checkbox" id="${id}" name="${name}" value="on"${checked}${invalid}>${label}${error}</div>`;
  }
  const attrs: string[] = [];
  let hint = '';
  if (item.type === 'number') {
    const config = item.numberConfig ?? {};
    if (config.min !== undefined) attrs.push(`min="${config.min}"`);
    if (config.max !== undefined) attrs.push(`max="${config.max}"`);
    attrs.push(`step="${config.step ?? 'any'}"`);
    hint = numberHint(config);
  }
  if (item.required) attrs.push('required');
  const type = item.type === 'number' ? 'number' : item.type === 'date' ? 'date' : 'text';
  const value = item.value !== null ? ` value="${escapeHtml(item.value)}"` : '';
  return `<div class="field">${label}<input type="${type}" id="${id}" name="${name}"${value}${attrs.length > 0 ? ` ${attrs.join(' ')}` : ''}${invalid}>${hint}${error}</div>`;
}

/** The rules of a number field in words, shown under it: `From 1 to 100, in steps of 0.5.` */
function numberHint(config: { min?: number; max?: number; step?: number }): string {
  const { min, max, step } = config;
  const range =
    min !== undefined && max !== undefined
      ? `From ${min} to ${max}`
      : min !== undefined
        ? `At least ${min}`
        : max !== undefined
          ? `At most ${max}`
          : '';
  const steps = step === undefined ? '' : `${range ? ', in' : 'In'} steps of ${step}`;
  return range || steps ? `<p class="field-hint">${escapeHtml(`${range}${steps}.`)}</p>` : '';
}

/**
 * A component name as a part of HTML ids, one to one: letters and digits kept, any other character
 * (`-` and `_` included) as `_<hex>_`, so two names never share an id, and `-` only separates.
 * @internal
 */
export function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9]/gu, (ch) => `_${ch.codePointAt(0)!.toString(16)}_`);
}
