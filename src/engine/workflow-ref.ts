import type { InputOf } from '../builders/workflow.js';

/**
 * The workflow `engine.run` and `engine.start` run: its name, or a definition with that name (what
 * `workflow(...).build()` returns), whose declared input type then checks the input. The stored
 * workflow of that name runs either way: a definition only names it.
 */
export type WorkflowRef = string | { readonly name: string; readonly '~input'?: unknown };

/** The input a workflow takes: the type its definition declares, `unknown` for a name. */
export type RunInput<W extends WorkflowRef> = W extends string ? unknown : InputOf<W>;

/** The name of the workflow `ref` stands for; what is neither a name nor a definition, as it is. */
export function workflowName(ref: unknown): unknown {
  if (typeof ref !== 'object' || ref === null) return ref;
  const name = (ref as { name?: unknown }).name;
  return typeof name === 'string' ? name : ref;
}
