/**
 * JSON text made once and written many times. In-memory storage keeps values as JSON text, and the
 * engine hands it run records whose finished steps (and input) are {@link JsonText}, serialized at
 * the first save after the steps finished. A later save of the run writes those texts as they are,
 * so it serializes only what changed, however long the run or large the finished steps' outputs.
 * @module
 */

/**
 * The JSON text of some values, taken once, with commas between them. As an item of an array it
 * stands for its values, in order, there; as a property it must hold exactly one value.
 * {@link toJson} writes the text as it is.
 * @internal
 */
export class JsonText {
  /** The values' JSON texts, joined by commas: what `JSON.stringify` gave for them when this was made. */
  readonly text: string;
  /** How many values the text holds. */
  readonly count: number;

  /** @throws TypeError as `JSON.stringify` does (a BigInt, a value that holds itself). */
  constructor(values: readonly unknown[]) {
    this.text = JSON.stringify(values).slice(1, -1);
    this.count = values.length;
  }

  /** The JSON text of one value. */
  static of(value: unknown): JsonText {
    return new JsonText([value]);
  }

  /**
   * The value the text holds (a fresh copy), for `JSON.stringify` (in a storage that does not know
   * JsonText). @throws Error when the text holds more or fewer values than one.
   */
  toJSON(): unknown {
    if (this.count !== 1) throw new Error(`JSON text of ${this.count} values stands for one value`);
    return JSON.parse(this.text);
  }
}

/**
 * A static property a storage class sets on itself (its own, not inherited) when its `put` writes
 * {@link JsonText} with {@link toJson}: the engine then saves run records with their finished steps
 * as text. A subclass does not inherit the mark, since it may read the records it is given.
 * @internal
 */
export const TAKES_JSON_TEXT: unique symbol = Symbol('stepwire.takesJsonText');

/** Whether `storage` is of a class marked with {@link TAKES_JSON_TEXT} (a subclass is not). @internal */
export function takesJsonText(storage: object): boolean {
  const cls = storage.constructor as unknown;
  return typeof cls === 'function' && Object.hasOwn(cls, TAKES_JSON_TEXT);
}

/**
 * `JSON.stringify(value)`, except that {@link JsonText} found as a property of `value`, or as an item
 * of an array that is one, is written from its text, not serialized again.
 * @internal
 */
export function toJson(value: unknown): string | undefined {
  if (!holdsText(value)) return JSON.stringify(value);
  const object = value as Record<string, unknown>;
  // Joined by `+`: a large text goes into the result as it is (a rope of a few pieces), not copied.
  let out = '{';
  for (const key of Object.keys(object)) {
    const text = partText(object[key]);
    if (text === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:` + text;
  }
  return out + '}';
}

/** True when `value` is a plain object holding JsonText (then its own properties are written one by one). */
function holdsText(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'toJSON' in value) return false;
  for (const key of Object.keys(value)) {
    const part = (value as Record<string, unknown>)[key];
    if (part instanceof JsonText) return true;
    if (Array.isArray(part) && part.some((item) => item instanceof JsonText)) return true;
  }
  return false;
}

/** The text of one property: JsonText as it is, an array item by item, anything else by JSON. */
function partText(part: unknown): string | undefined {
  if (part instanceof JsonText) return part.count === 1 ? part.text : JSON.stringify(part);
  if (!Array.isArray(part) || 'toJSON' in part) return JSON.stringify(part);
  let out = '[';
  for (let i = 0; i < part.length; i++) {
    const item: unknown = part[i];
    if (item instanceof JsonText && item.count === 0) continue;
    const text = item instanceof JsonText ? item.text : (JSON.stringify(item) ?? 'null');
    out += out.length === 1 ? text : ',' + text;
  }
  return out + ']';
}
