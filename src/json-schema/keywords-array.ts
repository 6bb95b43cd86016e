/**
 * Array keywords with draft 2020-12 meaning: `prefixItems`, `items` (the items after the prefix),
 * `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`.
 * @module
 */
import { canonicalKey, indexPath, plural, subjectOf } from './describe.js';
import { readCount, readSchemaList, type Check, type KeywordCompiler } from './types.js';

/** The array keywords of one schema as a single check. @internal */
export const compileArrayKeywords: KeywordCompiler = (schema, scope) => {
  const prefix = (readSchemaList(schema, 'prefixItems', scope) ?? []).map((sub, i) =>
    scope.sub(['prefixItems', i], sub, true),
  );
  let items: Check | null = null;
  if (Object.hasOwn(schema, 'items')) {
    if (Array.isArray(schema.items)) {
      scope.fail(
        ['items'],
        '"items" must be a schema; use "prefixItems" for a list of schemas, one per position',
      );
    } else items = scope.sub(['items'], schema.items, true);
  }
  const noMoreItems = schema.items === false;
  const minItems = readCount(schema, 'minItems', scope);
  const maxItems = readCount(schema, 'maxItems', scope);
  if (Object.hasOwn(schema, 'uniqueItems') && typeof schema.uniqueItems !== 'boolean') {
    scope.fail(['uniqueItems'], '"uniqueItems" must be a boolean');
  }
  const uniqueItems = schema.uniqueItems === true;
  const contains = Object.hasOwn(schema, 'contains') ? scope.sub(['contains'], schema.contains, true) : null;
  const minContains = readCount(schema, 'minContains', scope) ?? 1;
  const maxContains = readCount(schema, 'maxContains', scope);
  if (
    prefix.length === 0 &&
    items === null &&
    minItems === undefined &&
    maxItems === undefined &&
    !uniqueItems &&
    contains === null
  ) {
    return null;
  }

  return function checkArray(value, path, out) {
    if (!Array.isArray(value)) return true;
    let ok = true;
    const length = value.length;
    const prefixEnd = Math.min(prefix.length, length);
    for (let i = 0; i < prefixEnd; i += 1) {
      if (!prefix[i]!(value[i], out === null ? '' : indexPath(path, i), out)) {
        if (out === null) return false;
        ok = false;
      }
    }
    if (items !== null && length > prefix.length) {
      if (noMoreItems) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'too_big',
          path,
          message: `${subjectOf(path)} must have at most ${plural(prefix.length, 'item')}, got ${length}`,
        });
      } else {
        for (let i = prefix.length; i < length; i += 1) {
          if (!items(value[i], out === null ? '' : indexPath(path, i), out)) {
            if (out === null) return false;
            ok = false;
          }
        }
      }
    }
    if (minItems !== undefined && length < minItems) {
      if (out === null) return false;
      ok = false;
      out.push({
        code: 'too_small',
        path,
        message: `${subjectOf(path)} must have at least ${plural(minItems, 'item')}, got ${length}`,
      });
    }
    if (maxItems !== undefined && length > maxItems) {
      if (out === null) return false;
      ok = false;
      out.push({
        code: 'too_big',
        path,
        message: `${subjectOf(path)} must have at most ${plural(maxItems, 'item')}, got ${length}`,
      });
    }
    if (uniqueItems && length > 1) {
      const seen = new Map<string, number>();
      for (let i = 0; i < length; i += 1) {
        const key = canonicalKey(value[i]);
        const first = seen.get(key);
        if (first === undefined) {
          seen.set(key, i);
          continue;
        }
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'not_unique',
          path,
          message: `${subjectOf(path)} must not contain duplicates: items ${first} and ${i} are equal`,
        });
        break;
      }
    }
    if (contains !== null) {
      let count = 0;
      for (let i = 0; i < length; i += 1) if (contains(value[i], '', null)) count += 1;
      if (count < minContains) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'missing_item',
          path,
          message: `${subjectOf(path)} must contain at least ${plural(minContains, 'item')} matching "contains", found ${count}`,
        });
      }
      if (maxContains !== undefined && count > maxContains) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'too_many_items',
          path,
          message: `${subjectOf(path)} must contain at most ${plural(maxContains, 'item')} matching "contains", found ${count}`,
        });
      }
    }
    return ok;
  };
};
