import Mustache from 'mustache';
import { LimitError, ValidationError } from '../errors/index.js';
import { plainText } from './format.js';
import type { PdfTable } from './table-value.js';
import { TABLE_VIEW, type ResolvedValue } from './variables.js';

/** What a placeholder in the expanded template stands for: text, or a whole table. @internal */
export type Slot = { kind: 'text'; text: string } | { kind: 'table'; table: PdfTable };

/** Expanded template: markup in which each value is a placeholder `\uE000<n>\uE001` naming its slot. @internal */
export interface ExpandedTemplate {
  html: string;
  slots: Slot[];
}

/** Placeholder characters (Unicode private use): removed from templates, so only values make them. */
const OPEN = '\uE000';
const CLOSE = '\uE001';
/** A placeholder and the slot number it holds. @internal */
export const PLACEHOLDER = /\uE000(\d+)\uE001/g;
/** Where `[[page]]` and `[[pages]]` stand: the page number and the page count, filled in per page. @internal */
export const PAGE = '\uE002';
/** @internal */
export const PAGES = '\uE003';
const PAGE_TAG = /\[\[\s*(pages?)\s*\]\]/g;
const SPEC_MARKER = /\[\[\s*\.([^\s[\]]+)\s*\]\]/g;
const TAGS: [string, string] = ['[[', ']]'];
/**
 * Characters a template may expand to, counted at every section level (a section over 100,000 rows
 * inside one over 100,000 rows would otherwise run for hours before any other limit applied).
 */
const MAX_EXPANDED_CHARS = 64 * 1024 * 1024;

type Token = [string, string, number, number, Token[]?, number?];

/** Where in the template (line 3, column 7) a character offset is. */
function position(template: string, offset: number): string {
  const before = template.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

function templateError(code: string, message: string): ValidationError {
  return new ValidationError([{ code, path: 'template', message }]);
}

/** Turns mustache's parse errors into ones naming the section or tag and where it is. */
function parseError(error: unknown, template: string): ValidationError {
  const message = error instanceof Error ? error.message : String(error);
  const unclosed = /^Unclosed section "(.*)" at (\d+)$/.exec(message);
  if (unclosed)
    return templateError(
      'unclosed_section',
      `the section [[#${unclosed[1]}]] is never closed; add [[/${unclosed[1]}]] (the template ends at ${position(template, Number(unclosed[2]))})`,
    );
  const unopened = /^Unopened section "(.*)" at (\d+)$/.exec(message);
  if (unopened)
    return templateError(
      'unopened_section',
      `[[/${unopened[1]}]] at ${position(template, Number(unopened[2]))} closes a section that is not open`,
    );
  const tag = /^Unclosed tag at (\d+)$/.exec(message);
  if (tag)
    return templateError(
      'unclosed_tag',
      `a tag opened with [[ is not closed with ]] (near ${position(template, Number(tag[1]))})`,
    );
  return templateError('invalid_template', `the template cannot be read: ${message}`);
}

/** Refuses tags that would place a value unescaped (`[[{x}]]`, `[[&x]]`) and partials (`[[>x]]`). */
function checkTokens(tokens: readonly Token[], template: string): void {
  for (const token of tokens) {
    const [type, name, start] = token;
    if (type === '&')
      throw templateError(
        'unescaped_value',
        `[[{${name}}]] / [[&${name}]] at ${position(template, start)} would place a value as markup; values are always text: write [[${name}]]`,
      );
    if (type === '>')
      throw templateError(
        'partial',
        `[[>${name}]] at ${position(template, start)} names a partial; templates have no partials`,
      );
    if (token[4]) checkTokens(token[4], template);
  }
}

/** A mustache writer that caches nothing and stops when the expansion grows past the limit. */
class CountingWriter extends Mustache.Writer {
  expanded = 0;

  constructor() {
    super();
    (this as unknown as { templateCache: unknown }).templateCache = undefined;
  }

  override renderTokens(...args: Parameters<Mustache.Writer['renderTokens']>): string {
    const out = super.renderTokens(...args);
    this.expanded += out.length;
    if (this.expanded > MAX_EXPANDED_CHARS)
      throw new LimitError(
        'pdf.text',
        `the template's sections expand to more than ${MAX_EXPANDED_CHARS / (1024 * 1024)} Mi characters; a PDF this large could not be made`,
      );
    return out;
  }
}

/**
 * Expands the mustache sections and names of a template (tags `[[ ]]`) over the variables. Each
 * value becomes a placeholder, never markup and never template text: the caller places it as text
 * (or a whole table). The spec's `[[.name]]` places the variable `name` itself.
 * @throws ValidationError for `[[.name]]` naming no variable (path `variables`), and for an unclosed
 *   section or tag, an unescaped tag or a partial (path `template`).
 * @internal
 */
export function expandTemplate(
  template: string,
  values: ReadonlyMap<string, ResolvedValue>,
): ExpandedTemplate {
  const slots: Slot[] = [];
  const slot = (value: Slot): string => `${OPEN}${slots.push(value) - 1}${CLOSE}`;
  const unknown = new Set<string>();
  const clean = template
    .replace(/[\uE000-\uE003]/g, '')
    .replace(PAGE_TAG, (_, tag: string) => (tag === 'page' ? PAGE : PAGES));
  // The spec's marker: the variable itself, whatever section it stands in.
  const marked = clean.replace(SPEC_MARKER, (whole, name: string) => {
    const value = values.get(name);
    if (value?.kind === 'text') return slot({ kind: 'text', text: value.text });
    if (value?.kind === 'table') return slot({ kind: 'table', table: value.table });
    if (value) return slot({ kind: 'text', text: plainText(value.view) });
    const first = name.split('.')[0]!;
    if (name.includes('.') && values.has(first)) return `[[${name}]]`;
    unknown.add(name);
    return whole;
  });
  if (unknown.size > 0)
    throw new ValidationError(
      [...unknown].map((name) => ({
        code: 'unknown_variable',
        path: 'variables',
        message: `[[.${name}]] has no variable; add a variable named "${name}"`,
      })),
    );
  if (!marked.includes('[[')) return { html: marked, slots };
  const writer = new CountingWriter();
  let tokens: Token[];
  try {
    tokens = writer.parse(marked, TAGS) as Token[];
  } catch (error) {
    throw parseError(error, marked);
  }
  checkTokens(tokens, marked);
  const view = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of values)
    Object.defineProperty(view, name, { get: () => value.view, enumerable: true });
  const escape = (value: unknown): string => {
    const table = Array.isArray(value) ? (value as { [TABLE_VIEW]?: PdfTable })[TABLE_VIEW] : undefined;
    if (table) return slot({ kind: 'table', table });
    return slot({ kind: 'text', text: plainText(value) });
  };
  try {
    return {
      html: writer.renderTokens(tokens as never, new Mustache.Context(view), undefined, marked, {
        escape,
      } as never),
      slots,
    };
  } catch (error) {
    if (error instanceof LimitError || error instanceof ValidationError) throw error;
    throw templateError('invalid_template', `the template cannot be expanded: ${(error as Error).message}`);
  }
}
