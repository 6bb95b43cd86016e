/**
 * Checks of the components that name entities, against the catalog, when an application is stored:
 * a grid's operation names columns of its entity; a form that writes a row fills columns of its
 * entity with items of fitting types, and knows the row's whole key.
 * @module
 */
import type { Issue } from '../errors/index.js';
import type { Component, Entity, FormItem, WriteJob } from '../schema/index.js';
import { itemProperty } from './form.js';

/**
 * Form item types that fit each column type. A `ref` item fits too when its value column has the
 * same type (see {@link refIssues}), a `select` on a `NUMBER` column when its option values are numbers.
 */
const ITEM_TYPES: Record<string, readonly string[]> = {
  NUMBER: ['number', 'select', 'ref'],
  STRING: ['text', 'string', 'textarea', 'select', 'ref'],
  BOOLEAN: ['boolean', 'checkbox'],
  DATE: ['date', 'text', 'string', 'select', 'ref'],
  DATETIME: ['text', 'string', 'ref'],
};

/** Column types a `ref` item's value column may have: what a select option can send. */
const REF_VALUE_TYPES: readonly string[] = ['NUMBER', 'STRING', 'DATE', 'DATETIME'];

/** A number as a form sends it. */
const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Problems of the `ref` items of any form: the entity they pick from exists, with the label and
 * value columns they name (a value column of a type a choice can send). @internal
 */
export function refIssues(
  component: Extract<Component, { type: 'form' }>,
  entities: ReadonlyMap<string, Entity>,
  at: string,
): Issue[] {
  const issues: Issue[] = [];
  component.form.form_items.forEach((item, i) => {
    if (item.type !== 'ref' || !item.ref) return;
    const path = `${at}.form.form_items[${i}].ref`;
    const entity = entities.get(item.ref.entity);
    if (!entity) {
      issues.push({
        code: 'unknown_entity',
        path: `${path}.entity`,
        message: `form "${component.name}" item "${item.label}" picks from entity "${item.ref.entity}", which does not exist`,
      });
      return;
    }
    const names = entity.columns.map((c) => c.name).join(', ');
    for (const field of ['label_column', 'value_column'] as const) {
      const name = item.ref[field];
      const column = entity.columns.find((c) => c.name === name);
      if (!column)
        issues.push({
          code: 'unknown_column',
          path: `${path}.${field}`,
          message: `form "${component.name}" item "${item.label}" names ${field} "${name}", which entity "${entity.name}" does not have (columns: ${names})`,
        });
      else if (field === 'value_column' && !REF_VALUE_TYPES.includes(column.type))
        issues.push({
          code: 'type_mismatch',
          path: `${path}.${field}`,
          message: `form item "${item.label}" sends column "${name}" of entity "${entity.name}", which is ${column.type}; a choice sends a NUMBER, STRING, DATE or DATETIME value`,
        });
    }
  });
  return issues;
}

/**
 * The column type a `ref` item sends (its value column's), or undefined when unknown; a `select`'s
 * is `NUMBER` when every option value is a number, else `STRING`. @internal
 */
export function choiceType(
  item: FormItem,
  entities: ReadonlyMap<string, Entity>,
): { ref?: string | undefined; numericOptions?: boolean } {
  if (item.type === 'ref' && item.ref)
    return {
      ref: entities.get(item.ref.entity)?.columns.find((c) => c.name === item.ref!.value_column)?.type,
    };
  if (item.type === 'select')
    return { numericOptions: (item.options ?? []).every((o) => NUMBER_TEXT.test(o.value.trim())) };
  return {};
}

/**
 * Problems of a form that writes a row: its entity exists; each item fills a column of it with a
 * fitting type; `key` names exactly the primary-key columns, which items then do not fill; without
 * `key`, items fill every key column; a delete fills key columns only; `{{output.x}}` of its
 * redirect names `written` or a column that an item or the key fills. @internal
 */
export function writeFormIssues(
  component: Extract<Component, { type: 'form' }>,
  job: WriteJob,
  entities: ReadonlyMap<string, Entity>,
  at: string,
): Issue[] {
  const entity = entities.get(job.entity_name);
  const form = `form "${component.name}"`;
  if (!entity)
    return [
      {
        code: 'unknown_entity',
        path: `${at}.form.job.entity_name`,
        message: `${form} writes entity "${job.entity_name}", which does not exist`,
      },
    ];
  const issues: Issue[] = [];
  const columns = entity.columns.map((c) => c.name).join(', ');
  const keyed = new Set(Object.keys(job.key ?? {}));
  const filled = new Set<string>();
  /** Items a person may leave empty (or not send), by the column they fill. */
  const optional = new Map<string, string>();
  component.form.form_items.forEach((item, i) => {
    const property = itemProperty(item);
    const path = `${at}.form.form_items[${i}]`;
    const column = entity.columns.find((c) => c.name === property);
    filled.add(property);
    // Key columns are required whatever the item says (see writeItems); a box is never empty.
    if (
      !item.required &&
      item.type !== 'boolean' &&
      item.type !== 'checkbox' &&
      !entity.primary_key.includes(property) &&
      !column?.required
    )
      optional.set(property, item.label);
    if (!column)
      issues.push({
        code: 'unknown_column',
        path,
        message: `${form} item "${item.label}" fills "${property}", which is not a column of entity "${entity.name}" (columns: ${columns})`,
      });
    else if (!ITEM_TYPES[column.type]?.includes(item.type))
      issues.push({
        code: 'type_mismatch',
        path: `${path}.type`,
        message: `form item "${item.label}" is of type ${item.type}, but column "${property}" is ${column.type}`,
      });
    else if (choiceMismatch(item, column.type, entities))
      issues.push({
        code: 'type_mismatch',
        path: `${path}.${item.type === 'ref' ? 'ref.value_column' : 'options'}`,
        message: choiceMismatch(item, column.type, entities)!.replace('$COLUMN', `column "${property}"`),
      });
    else if (item.type === 'select' && column.enum)
      (item.options ?? []).forEach((option, o) => {
        if (!column.enum!.map(String).includes(option.value))
          issues.push({
            code: 'invalid_option',
            path: `${path}.options[${o}].value`,
            message: `form item "${item.label}" offers "${option.value}", which column "${property}" does not allow (enum: ${column.enum!.map(String).join(', ')})`,
          });
      });
    else if (keyed.has(property))
      issues.push({
        code: 'key_item',
        path,
        message: `${form} item "${item.label}" fills key column "${property}", which the job's key takes from the screen's address; remove the item`,
      });
    else if (job.write_mode === 'delete' && !entity.primary_key.includes(property))
      issues.push({
        code: 'unknown_column',
        path,
        message: `${form} deletes rows, so its items may fill only key columns (${entity.primary_key.join(', ')}), not "${property}"`,
      });
  });
  if (job.key !== undefined) {
    for (const column of keyed)
      if (!entity.primary_key.includes(column))
        issues.push({
          code: 'unknown_column',
          path: `${at}.form.job.key.${column}`,
          message: `${form} key names "${column}", which is not a primary-key column of "${entity.name}" (${entity.primary_key.join(', ')})`,
        });
  }
  for (const column of entity.primary_key)
    if (!keyed.has(column) && !filled.has(column))
      issues.push({
        code: 'missing_key',
        path: job.key === undefined ? `${at}.form.form_items` : `${at}.form.job.key`,
        message: `${form} writes "${entity.name}" by its key, but nothing fills key column "${column}": add an item for it, or name it in the job's key`,
      });
  // The output is the row as written: what the items and the key fill, and `written`; a column that
  // neither fills is not in it, so a redirect naming one would fail after every save.
  const written = [...new Set([...filled, ...keyed])];
  const redirect = component.form.do?.redirect_data.url ?? '';
  for (const match of redirect.matchAll(/\{\{\s*output\.([^}.[\s]+)[^}]*\}\}/g)) {
    const field = match[1]!;
    if (field !== 'written' && !written.includes(field))
      issues.push({
        code: 'unknown_output',
        path: `${at}.form.do.redirect_data.url`,
        message: `redirect uses {{output.${field}}}, but ${form} outputs only the row it writes (${written.join(', ')}) and written`,
      });
    else if (optional.has(field) && !keyed.has(field))
      // Left empty, the value is null and the redirect cannot be built: after the row was written.
      issues.push({
        code: 'optional_output',
        path: `${at}.form.do.redirect_data.url`,
        message: `redirect uses {{output.${field}}}, which item "${optional.get(field)!}" may leave empty, so the row would be written and the redirect fail: make the item required`,
      });
  }
  return issues;
}

/**
 * Why a `ref` or `select` item cannot fill a column of `type` (`$COLUMN` stands for the column), or
 * undefined when it can: a ref's value column has another type, a select on a `NUMBER` column
 * offers a value that is no number.
 */
function choiceMismatch(
  item: FormItem,
  type: string,
  entities: ReadonlyMap<string, Entity>,
): string | undefined {
  const choice = choiceType(item, entities);
  if (item.type === 'ref' && choice.ref !== undefined && choice.ref !== type)
    return `form item "${item.label}" sends column "${item.ref!.value_column}" of entity "${item.ref!.entity}", which is ${choice.ref}, but $COLUMN is ${type}`;
  if (item.type === 'select' && type === 'NUMBER' && !choice.numericOptions)
    return `form item "${item.label}" offers values that are not numbers, but $COLUMN is NUMBER`;
  return undefined;
}
