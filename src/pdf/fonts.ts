import fontkit from '@pdf-lib/fontkit';
import type { PDFDocument } from 'pdf-lib';
import { decodeBase64 } from './base64.js';
import {
  DEJAVU_SANS_BOLD,
  DEJAVU_SANS_BOLD_ITALIC,
  DEJAVU_SANS_ITALIC,
  DEJAVU_SANS_REGULAR,
} from './fonts/dejavu-sans.js';
import { TextFace } from './text-face.js';

/** Face index: bit 1 = bold, bit 2 = italic. @internal */
export type FaceIndex = 0 | 1 | 2 | 3;

const SOURCES = [DEJAVU_SANS_REGULAR, DEJAVU_SANS_BOLD, DEJAVU_SANS_ITALIC, DEJAVU_SANS_BOLD_ITALIC];
const decoded: (Uint8Array | undefined)[] = [];

/** Font bytes of a face, decoded once per process. */
function fontBytes(index: FaceIndex): Uint8Array {
  let bytes = decoded[index];
  if (!bytes) {
    bytes = decodeBase64(SOURCES[index]!);
    decoded[index] = bytes;
  }
  return bytes;
}

/** The faces of one document; faces not asked for are not embedded. @internal */
export class FaceSet {
  readonly #faces: (TextFace | undefined)[];

  private constructor(faces: (TextFace | undefined)[]) {
    this.#faces = faces;
  }

  /** Embeds (subset) the faces in `used` (regular always) into `doc`. */
  static async embed(doc: PDFDocument, used: ReadonlySet<FaceIndex>): Promise<FaceSet> {
    doc.registerFontkit(fontkit);
    const faces: (TextFace | undefined)[] = [];
    for (const index of [0, 1, 2, 3] as const) {
      if (index !== 0 && !used.has(index)) continue;
      const font = await doc.embedFont(fontBytes(index), { subset: true });
      faces[index] = new TextFace(font, `F${index + 1}`);
    }
    return new FaceSet(faces);
  }

  /** The face for a style, falling back to regular. */
  pick(bold: boolean, italic: boolean): TextFace {
    return this.#faces[(bold ? 1 : 0) + (italic ? 2 : 0)] ?? this.#faces[0]!;
  }

  /** Every embedded face. */
  all(): TextFace[] {
    return this.#faces.filter((face): face is TextFace => face !== undefined);
  }
}
