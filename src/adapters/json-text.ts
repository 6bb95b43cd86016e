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
 * `JSON.stringify(value)`, except that {@link JsonText} found as a property of `value`, or as an item
 * of an array that is one, is written from its text, not serialized again.
 * @internal
 */
export function toJson(value: unknown): string | undefined {
  if (!holdsText(value)) return JSON.stringify(value);
  const object = value as Record<string, unknown>;
  // One join of all pieces: the result is one flat string, not a rope of pieces for the heap to keep.
  const pieces: string[] = ['{'];
  for (const key of Object.keys(object)) {
    const start = pieces.length;
    pieces.push(start === 1 ? '' : ',', JSON.stringify(key), ':');
    if (!writePart(object[key], pieces)) pieces.length = start;
  }
  pieces.push('}');
  return pieces.join('');
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

/**
 * Adds the text of one property to `pieces`: JsonText as it is, an array item by item, anything else
 * by JSON. False when JSON leaves the property out (`undefined`, a function).
 */
function writePart(part: unknown, pieces: string[]): boolean {
  if (part instanceof JsonText) {
    pieces.push(part.count === 1 ? part.text : JSON.stringify(part));
    return true;
  }
  if (!Array.isArray(part) || 'toJSON' in part) {
    const text = JSON.stringify(part);
    if (text === undefined) return false;
    pieces.push(text);
    return true;
  }
  pieces.push('[');
  let first = true;
  for (let i = 0; i < part.length; i++) {
    const item: unknown = part[i];
    if (item instanceof JsonText && item.count === 0) continue;
    if (!first) pieces.push(',');
    first = false;
    pieces.push(item instanceof JsonText ? item.text : (JSON.stringify(item) ?? 'null'));
  }
  pieces.push(']');
  return true;
}
