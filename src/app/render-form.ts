/**
 * The HTML of a form component: its items with their labels, hints and errors, its tokens, its
 * submit button.
 * @module
 */
import { escapeHtml, type RenderContext } from './html.js';
import type { FormSearch, ResolvedForm, ResolvedFormItem } from './types.js';

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
  // A ref item's search box sits in the form, but belongs (by its form attribute) to a GET form of
  // the screen after it: forms do not nest, and the search, in the address, keeps the screen's query.
  const searches = form.items
    .map((item, i) => (item.search ? searchForm(item.search, `${ids[i]}-search`, context) : ''))
    .join('');
  return `<div class="c-form"><form method="post" action="${escapeHtml(action)}" aria-label="${escapeHtml(form.name)}"${described}>${alert}${token}${fields}<button type="submit">${escapeHtml(form.submitLabel)}</button></form>${searches}</div>`;
}

/** The GET form a ref item's search box submits: the screen, with its other query parameters kept. */
function searchForm(search: FormSearch, id: string, context: RenderContext): string {
  const { screen, appBase } = context;
  const action = `${appBase}/screens/${encodeURIComponent(screen.url)}`;
  const kept = Object.entries(screen.query)
    .filter(([name]) => name !== search.param)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<form class="ref-search" id="${id}" method="get" action="${escapeHtml(action)}">${kept}</form>`;
}

function renderItem(item: ResolvedFormItem, id: string): string {
  const errorId = `${id}-error`;
  const marker = item.required ? '<span class="required" aria-hidden="true"> *</span>' : '';
  const label = `<label for="${id}">${escapeHtml(item.label)}${marker}</label>`;
  const name = escapeHtml(item.property);
  const attrs: string[] = [];
  const hints: string[] = [];
  const type =
    item.type === 'number'
      ? 'number'
      : item.type === 'date'
        ? 'date'
        : item.rules.format === 'email'
          ? 'email'
          : item.rules.format === 'url'
            ? 'url'
            : 'text';
  if (item.type === 'number') {
    const config = item.numberConfig ?? {};
    if (config.min !== undefined) attrs.push(`min="${config.min}"`);
    if (config.max !== undefined) attrs.push(`max="${config.max}"`);
    attrs.push(`step="${config.step ?? 'any'}"`);
    hints.push(numberHint(config));
  }
  const { minLength, maxLength } = item.rules;
  if (minLength !== null) attrs.push(`minlength="${minLength}"`);
  if (maxLength !== null) attrs.push(`maxlength="${maxLength}"`);
  hints.push(...ruleHints(item));
  if (item.required) attrs.push('required');
  // Hints, help and notice are read with the field; the error, when there is one, last.
  const said = hints.filter((h) => h !== '');
  const notes: { id: string; html: string }[] = said.map((text, n) => ({
    id: `${id}-hint${n === 0 ? '' : `-${n}`}`,
    html: text,
  }));
  if (item.help) notes.push({ id: `${id}-help`, html: escapeHtml(item.help) });
  if (item.notice) notes.push({ id: `${id}-notice`, html: escapeHtml(item.notice) });
  const describedBy = [...notes.map((n) => n.id), ...(item.error ? [errorId] : [])];
  const aria =
    (item.error ? ' aria-invalid="true"' : '') +
    (describedBy.length > 0 ? ` aria-describedby="${describedBy.join(' ')}"` : '');
  const after =
    notes.map((n) => `<p class="field-hint" id="${n.id}">${n.html}</p>`).join('') +
    (item.error ? `<p class="field-error" id="${errorId}">${escapeHtml(item.error)}</p>` : '');
  const attributes = attrs.length > 0 ? ` ${attrs.join(' ')}` : '';
  if (item.type === 'boolean' || item.type === 'checkbox') {
    const checked = item.value !== null && /^(on|true|1|yes)$/i.test(item.value.trim()) ? ' checked' : '';
    return `<div class="field checkbox"><input type="checkbox" id="${id}" name="${name}" value="on"${checked}${aria}>${label}${after}</div>`;
  }
  if (item.type === 'textarea') {
    // The HTML parser drops a newline just after <textarea>: one more keeps a value that starts with one.
    const value = item.value === null ? '' : item.value.startsWith('\n') ? `\n${item.value}` : item.value;
    return `<div class="field">${label}<textarea id="${id}" name="${name}" rows="4"${attributes}${aria}>${escapeHtml(value)}</textarea>${after}</div>`;
  }
  if (item.type === 'select' || item.type === 'ref') {
    const options = item.options ?? [];
    const chosen = item.value;
    // Nothing chosen unless the value is a choice: never a choice the person did not make.
    const list = options
      .map(
        (o) =>
          `<option value="${escapeHtml(o.value)}"${o.value === chosen ? ' selected' : ''}>${escapeHtml(o.label)}</option>`,
      )
      .join('');
    const select = `<select id="${id}" name="${name}"${item.required ? ' required' : ''}${aria}><option value="">${options.length > 0 ? 'Choose…' : item.search ? 'Search first' : 'Nothing to choose'}</option>${list}</select>`;
    const search = item.search ? searchBox(item, id) : '';
    return `<div class="field">${label}${search}${select}${after}</div>`;
  }
  const value = item.value !== null ? ` value="${escapeHtml(item.value)}"` : '';
  return `<div class="field">${label}<input type="${type}" id="${id}" name="${name}"${value}${attributes}${aria}>${after}</div>`;
}

/** The search box of a ref item: a search input and button of the item's GET form. */
function searchBox(item: ResolvedFormItem, id: string): string {
  const search = item.search!;
  const form = `${id}-search`;
  return `<div class="ref-search-box"><label class="search-label" for="${id}-q">Search ${escapeHtml(item.label)}</label><input type="search" id="${id}-q" name="${escapeHtml(search.param)}" value="${escapeHtml(search.query)}" form="${form}" maxlength="200"><button type="submit" form="${form}">Search</button></div>`;
}

/** The rules of a text item in words (escaped HTML), each shown under the field. */
function ruleHints(item: ResolvedFormItem): string[] {
  const { minLength, maxLength, pattern, format, checks } = item.rules;
  const hints: string[] = [];
  const chars = (n: number) => `${n} character${n === 1 ? '' : 's'}`;
  if (minLength !== null && maxLength !== null)
    hints.push(
      minLength === maxLength ? `Exactly ${chars(minLength)}.` : `From ${minLength} to ${chars(maxLength)}.`,
    );
  else if (minLength !== null) hints.push(`At least ${chars(minLength)}.`);
  else if (maxLength !== null) hints.push(`At most ${chars(maxLength)}.`);
  if (format === 'email') hints.push('An email address, like name@example.com.');
  if (format === 'url') hints.push('A web address starting with http:// or https://.');
  const shown = hints.map(escapeHtml);
  if (pattern !== null) shown.push(`Must match the pattern <code>${escapeHtml(pattern)}</code>.`);
  shown.push(...checks.map(escapeHtml));
  return shown;
}

/** The rules of a number field in words (escaped HTML), shown under it: `From 1 to 100, in steps of 0.5.` */
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
  return range || steps ? escapeHtml(`${range}${steps}.`) : '';
}

/**
 * A component name as a part of HTML ids, one to one: letters and digits kept, any other character
 * (`-` and `_` included) as `_<hex>_`, so two names never share an id, and `-` only separates.
 * @internal
 */
export function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9]/gu, (ch) => `_${ch.codePointAt(0)!.toString(16)}_`);
}
