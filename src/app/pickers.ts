/**
 * The choices of `select` and `ref` form items, and the check of a submitted `ref` value. A `ref`
 * item lists the rows of its entity that the viewer may read: all of them in a select when there
 * are at most {@link REF_SELECT_ROWS}, else the rows whose label contains the text of a search box
 * (a GET of the screen, so the search is in the address). Every read goes through the host's
 * catalog, so the viewer's access rules apply to the choices as to any other read.
 * @module
 */
import { ForbiddenError, isStepwireError, type Issue } from '../errors/index.js';
import type { Entity, Filter, OrderBy } from '../schema/index.js';
import { keyPath } from '../json-schema/describe.js';
import { coerceForm, itemProperty, type CoercedForm, type ShownItem } from './form.js';
import type { AppHost } from './host.js';
import type { FormOption, FormSearch, ScreenQuery } from './types.js';

/** Most rows a `ref` item lists in one select; an entity with more gets a search box. @internal */
export const REF_SELECT_ROWS = 200;
/** Most rows a `ref` item's search lists. @internal */
export const REF_SEARCH_ROWS = 50;
/** Longest search text read from the address; the rest is cut off. */
const MAX_SEARCH_LENGTH = 200;

/** What a `select` or `ref` item offers: its choices, its search box, and a sentence about them. @internal */
export interface ItemChoices {
  options: FormOption[] | null;
  search: FormSearch | null;
  notice: string | null;
}

type Ref = NonNullable<ShownItem['ref']>;

/** The query parameter of a `ref` item's search: `<form>_<item property>_q`. @internal */
export function searchParam(form: string, item: ShownItem): string {
  return `${form}_${itemProperty(item)}_q`;
}

/**
 * The choices of one item: a `select`'s options, a `ref`'s rows (all, or those its search finds,
 * with the current `value`'s row kept among them); nothing for other items. @internal
 */
export async function itemChoices(
  host: AppHost,
  form: string,
  item: ShownItem,
  value: string | null,
  query: ScreenQuery,
): Promise<ItemChoices> {
  if (item.type === 'select')
    return {
      options: (item.options ?? []).map((o) => ({ value: o.value, label: o.label ?? o.value })),
      search: null,
      notice: null,
    };
  if (item.type !== 'ref' || !item.ref) return { options: null, search: null, notice: null };
  const ref = item.ref;
  const none = (notice: string): ItemChoices => ({ options: [], search: null, notice });
  try {
    const entity = await refEntity(host, ref);
    if (!entity) return none(cannotSee(ref));
    // Whether the entity is small is read without an order: ordering a large one costs a sort of it all.
    const probe = await readChoices(host, ref, entity, [], REF_SELECT_ROWS + 1, false);
    if (probe === undefined) return none(`The rows of "${ref.entity}" could not be read.`);
    const first =
      probe.length <= REF_SELECT_ROWS ? await readChoices(host, ref, entity, [], REF_SELECT_ROWS) : probe;
    if (first === undefined) return none(`The rows of "${ref.entity}" could not be read.`);
    if (probe.length <= REF_SELECT_ROWS)
      return {
        options: first,
        search: null,
        notice: first.length === 0 ? `There is no row of "${ref.entity}" to choose.` : null,
      };
    const param = searchParam(form, item);
    const asked = Object.hasOwn(query, param) ? query[param]!.trim() : '';
    const text = [...asked].slice(0, MAX_SEARCH_LENGTH).join('');
    let options: FormOption[] = [];
    let notice = `Search to list the rows of "${ref.entity}" to choose from.`;
    if (text !== '') {
      const filter = searchFilter(entity, ref.label_column, text);
      const found = filter ? await readChoices(host, ref, entity, [filter], REF_SEARCH_ROWS + 1) : [];
      options = (found ?? []).slice(0, REF_SEARCH_ROWS);
      notice =
        found === undefined
          ? `The rows of "${ref.entity}" could not be searched.`
          : found.length === 0
            ? `No row of "${ref.entity}" matches "${text}".`
            : found.length > REF_SEARCH_ROWS
              ? `Showing the first ${REF_SEARCH_ROWS} matches of "${text}": search for more of the text to narrow them.`
              : `${found.length} ${found.length === 1 ? 'match' : 'matches'} of "${text}".`;
    }
    // The value the form holds (a row being edited, a value sent back) stays choosable.
    if (value !== null && value !== '' && !options.some((o) => o.value === value)) {
      const current = await readChoices(host, ref, entity, [valueFilter(entity, ref, value)], 1);
      if (current?.[0]) options.unshift(current[0]);
    }
    return { options, search: { param, query: text }, notice };
  } catch (error) {
    if (error instanceof ForbiddenError) return none(cannotSee(ref));
    if (isStepwireError(error)) return none(`The rows of "${ref.entity}" could not be read.`);
    throw error;
  }
}

/**
 * Coerces a submission (see `coerceForm`) and checks each `ref` value against its entity: a row
 * the viewer may read holds it in the value column, else the item is refused. A `ref` value is a
 * number when its value column is `NUMBER`. @internal
 */
export async function coerceSubmission(
  host: AppHost,
  items: readonly ShownItem[],
  values: Readonly<Record<string, string>>,
): Promise<CoercedForm> {
  const entities = new Map<string, Promise<Entity | undefined | Error>>();
  const entityOf = (ref: Ref) => {
    let found = entities.get(ref.entity);
    if (!found)
      entities.set(
        ref.entity,
        (found = refEntity(host, ref).catch((error: unknown) => {
          if (isStepwireError(error)) return error;
          throw error;
        })),
      );
    return found;
  };
  const typed = await Promise.all(
    items.map(async (item) => {
      if (item.type !== 'ref' || !item.ref || item.numeric !== undefined) return item;
      const entity = await entityOf(item.ref);
      const column =
        entity instanceof Error ? undefined : entity?.columns.find((c) => c.name === item.ref!.value_column);
      return { ...item, numeric: column?.type === 'NUMBER' };
    }),
  );
  const coerced = coerceForm(typed, values);
  const refused = await Promise.all(
    typed.map(async (item): Promise<Issue | undefined> => {
      const property = itemProperty(item);
      if (item.type !== 'ref' || !item.ref || !Object.hasOwn(coerced.input, property)) return undefined;
      const ref = item.ref;
      const path = keyPath('', property);
      const entity = await entityOf(ref);
      if (entity instanceof ForbiddenError || entity === undefined)
        return { code: 'forbidden', path, message: `${item.label} cannot be chosen: ${cannotSee(ref)}` };
      const value = coerced.input[property];
      const found =
        entity instanceof Error
          ? undefined
          : await readChoices(host, ref, entity, [valueFilter(entity, ref, value)], 1).catch(
              (error: unknown) => {
                if (isStepwireError(error)) return undefined;
                throw error;
              },
            );
      if (found === undefined)
        return {
          code: 'unreadable',
          path,
          message: `${item.label} cannot be checked: the rows of "${ref.entity}" could not be read`,
        };
      if (found.length === 0)
        return { code: 'not_an_option', path, message: `${item.label} must be one of its choices` };
      return undefined;
    }),
  );
  const issues = [...coerced.issues, ...refused.filter((i): i is Issue => i !== undefined)];
  if (issues.length === coerced.issues.length) return coerced;
  // Issues in the order of the items, as coerceForm gives them.
  const order = new Map(items.map((item, i) => [keyPath('', itemProperty(item)), i]));
  issues.sort((a, b) => (order.get(a.path) ?? 0) - (order.get(b.path) ?? 0));
  return { input: coerced.input, issues };
}

/** What a `ref` item says when its viewer may not read the rows (or columns) it lists. */
function cannotSee(ref: Ref): string {
  return `you may not see the rows of "${ref.entity}", so there is nothing to choose here.`;
}

/**
 * The referenced entity as the viewer sees it, or undefined when a column the item needs is hidden
 * from the viewer (or gone). @throws what `getDefinition` throws (forbidden, not found).
 */
async function refEntity(host: AppHost, ref: Ref): Promise<Entity | undefined> {
  const entity = await host.catalog.getDefinition(ref.entity);
  const has = (name: string) => entity.columns.some((c) => c.name === name);
  return has(ref.label_column) && has(ref.value_column) ? entity : undefined;
}

/**
 * Rows of the referenced entity as choices, ordered by label then value unless `ordered` is false;
 * undefined when the read failed. A row without a value is no choice; a row without a label shows
 * its value.
 */
async function readChoices(
  host: AppHost,
  ref: Ref,
  entity: Entity,
  filters: Filter[],
  rows: number,
  ordered = true,
): Promise<FormOption[] | undefined> {
  const columns = [...new Set([ref.label_column, ref.value_column])];
  const order_by: OrderBy[] = ordered ? columns.map((column) => ({ column, direction: 'ASC' })) : [];
  const read = await host.catalog.getEntity({
    entity_name: entity.name,
    operation: {
      select_columns: columns.map((column) => ({ column })),
      filters: [{ column: ref.value_column, operator: 'IS_NOT_NULL' }, ...filters],
      order_by,
    },
    page_size: Math.min(rows, host.options.limits.maxPageSize),
  });
  if (read.body.error?.is_error) return undefined;
  const names = (read.body.table.columns ?? []).map((c) => c.name);
  const v = names.indexOf(ref.value_column);
  const l = names.indexOf(ref.label_column);
  const options: FormOption[] = [];
  for (const row of read.body.table.rows ?? []) {
    const value = row[v];
    if (value === null || value === undefined || value === '') continue;
    const label = row[l];
    const shown = label === null || label === undefined || label === '' ? value : label;
    const option: FormOption = { value: String(value), label: String(shown) };
    options.push(option);
  }
  return options;
}

/** The filter of the row whose value column holds `value`. */
function valueFilter(entity: Entity, ref: Ref, value: unknown): Filter {
  const type = entity.columns.find((c) => c.name === ref.value_column)?.type;
  return {
    column: ref.value_column,
    operator: 'EQUALS',
    value_type: type === 'NUMBER' ? 'NUMBER' : 'STRING',
    value: type === 'NUMBER' ? value : String(value),
  };
}

/**
 * The filter of a search: `CONTAINS` the text over a text label column, `EQUALS` over a number one
 * (undefined when the text is no number: nothing matches).
 */
function searchFilter(entity: Entity, column: string, text: string): Filter | undefined {
  const type = entity.columns.find((c) => c.name === column)?.type;
  if (type === 'NUMBER') {
    const n = Number(text);
    return /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) && Number.isFinite(n)
      ? { column, operator: 'EQUALS', value_type: 'NUMBER', value: n }
      : undefined;
  }
  if (type === 'BOOLEAN') return undefined;
  return { column, operator: 'CONTAINS', value_type: 'STRING', value: text };
}

/** The choices of every item of a form, by item. @internal */
export async function formChoices(
  host: AppHost,
  form: string,
  items: readonly ShownItem[],
  values: Readonly<Record<string, string>>,
  query: ScreenQuery,
): Promise<Map<string, ItemChoices>> {
  const out = new Map<string, ItemChoices>();
  await Promise.all(
    items.map(async (item) => {
      const property = itemProperty(item);
      const value = Object.hasOwn(values, property) ? String(values[property]) : null;
      out.set(property, await itemChoices(host, form, item, value, query));
    }),
  );
  return out;
}
