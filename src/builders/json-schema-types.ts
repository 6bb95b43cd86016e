/**
 * A small type-level mapping from a JSON Schema literal to the TypeScript type it describes, enough
 * for workflow inputs: `type` (object, string, number, integer, boolean, array, null), `properties`,
 * `required`, `items`, `enum` and `const`.
 * @module
 */

/** A JSON Schema written as a literal, as accepted by `workflow(...).input({ schema })`. */
export interface JsonSchemaLiteral {
  /** The JSON type. */
  readonly type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null';
  /** Schemas of an object's properties. */
  readonly properties?: { readonly [key: string]: JsonSchemaLiteral };
  /** Names of the properties that must be present. */
  readonly required?: readonly string[];
  /** Schema of an array's items. */
  readonly items?: JsonSchemaLiteral;
  /** The allowed values. */
  readonly enum?: readonly unknown[];
  /** The one allowed value. */
  readonly const?: unknown;
  /** Any other JSON Schema keyword (`minimum`, `pattern`, `description`...), kept as written. */
  readonly [keyword: string]: unknown;
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type RequiredNames<S> = S extends { readonly required: readonly (infer R)[] } ? R & string : never;

type ObjectFrom<S> = S extends { readonly properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P & RequiredNames<S>]: FromJsonSchema<P[K]> } & {
        -readonly [K in Exclude<keyof P, RequiredNames<S>>]?: FromJsonSchema<P[K]>;
      }
    >
  : Record<string, unknown>;

/**
 * The TypeScript type of values valid against the JSON Schema literal `S`.
 * @example
 * ```ts
 * type Input = FromJsonSchema<{ type: 'object'; properties: { amount: { type: 'number' } }; required: ['amount'] }>;
 * // { amount: number }
 * ```
 */
export type FromJsonSchema<S> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: readonly (infer E)[] }
    ? E
    : S extends { readonly type: 'object' }
      ? ObjectFrom<S>
      : S extends { readonly type: 'array'; readonly items: infer I }
        ? FromJsonSchema<I>[]
        : S extends { readonly type: 'array' }
          ? unknown[]
          : S extends { readonly type: 'string' }
            ? string
            : S extends { readonly type: 'number' | 'integer' }
              ? number
              : S extends { readonly type: 'boolean' }
                ? boolean
                : S extends { readonly type: 'null' }
                  ? null
                  : S extends { readonly properties: object }
                    ? ObjectFrom<S>
                    : unknown;
