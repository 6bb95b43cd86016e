import type { create } from 'qrcode';
// The encoder core of `qrcode` (no renderers, no Node built-ins, so it runs on edge too); the
// package declares types for its main entry only, whose `create` is this one.
// @ts-expect-error -- no declaration file for the core module
import core from 'qrcode/lib/core/qrcode.js';

/** The `qrcode` package's encoder. @internal */
export function qrcode(): { create: typeof create } {
  return core as { create: typeof create };
}
