import { ValidationError } from '../errors/index.js';
import { tableAsLines } from './table-value.js';
import { expandTemplate, PLACEHOLDER, type Slot } from './template.js';
import type { PdfVariable } from './types.js';
import { resolveVariables } from './variables.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function slotText(slot: Slot | undefined): string {
  if (!slot) return '';
  return slot.kind === 'text' ? slot.text : tableAsLines(slot.table).join('\n');
}

/**
 * Renders texts (an e-mail's subject, text and html, a chat message) as mustache templates with
 * `[[ ]]` tags over `create_pdf`-style variables: the same sections, dotted names and formats. Values
 * are HTML-escaped in `html` fields and placed as they are in plain-text ones; a value is never read
 * as a template. A `TABLE` placed alone prints as lines, cells joined by ` | `.
 * @returns the rendered fields, by the same names.
 * @throws ValidationError naming the field (an unclosed section) or the variable.
 * @example renderTexts({ subject: 'Invoice [[number]]' }, [{ name: 'number', value_type: 'NUMBER', value: 42 }])
 */
export function renderTexts<K extends string>(
  fields: Partial<Record<K, string | undefined>>,
  variables: readonly PdfVariable[] | undefined,
  htmlFields: readonly NoInfer<K>[] = [],
): Partial<Record<K, string>> {
  const values = resolveVariables(variables);
  const out: Partial<Record<K, string>> = {};
  for (const [field, template] of Object.entries(fields) as [K, string | undefined][]) {
    if (template === undefined) continue;
    let expanded;
    try {
      expanded = expandTemplate(template, values);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new ValidationError(
        error.issues.map((issue) => (issue.path === 'template' ? { ...issue, path: field } : issue)),
      );
    }
    const html = htmlFields.includes(field);
    out[field] = expanded.html
      .replace(PLACEHOLDER, (_, index: string) => {
        const text = slotText(expanded.slots[Number(index)]);
        return html ? text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!) : text;
      })
      .replace(/[\uE002\uE003]/g, '');
  }
  return out;
}
