/**
 * The rule for an entity listed more than once in a transform's `output_entities`, checked when a
 * workflow is created and again when a transform runs.
 * @internal
 * @module
 */

/**
 * Output entities listed again with a write mode that may not repeat: appends to one entity may repeat
 * (their rows land in order), any other mode may not, since the script's rows for an entity are one
 * write. Each is the index of the later entry and why. @internal
 */
export function repeatedOutputs(
  outputs: readonly { name: string; write_mode: string }[],
): { index: number; message: string }[] {
  const first = new Map<string, number>();
  const repeats: { index: number; message: string }[] = [];
  outputs.forEach((output, index) => {
    const earlier = first.get(output.name);
    if (earlier === undefined) {
      first.set(output.name, index);
      return;
    }
    const modes = [outputs[earlier]!.write_mode, output.write_mode];
    if (modes.every((mode) => mode === 'append')) return;
    repeats.push({
      index,
      message: `"${output.name}" is already output_entities[${earlier}] (${modes[0]}); an entity may be listed twice only when both append, got ${modes[1]}`,
    });
  });
  return repeats;
}
