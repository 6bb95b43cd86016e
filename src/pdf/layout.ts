import type { Box } from './drawables.js';
import type { FaceSet, FaceIndex } from './fonts.js';
import { ASCENT, DESCENT, type PageWriter } from './page-writer.js';
import { drawTable } from './table-layout.js';
import { normalizeInlines, wrapInlines } from './text-layout.js';
import type { Block, TextRole } from './types.js';

interface RoleStyle {
  size: number;
  bold: boolean;
  before: number;
  after: number;
}

/** Type sizes and spacing (points) of each text role. */
const ROLES: Record<TextRole, RoleStyle> = {
  p: { size: 10, bold: false, before: 0, after: 6 },
  li: { size: 10, bold: false, before: 0, after: 2 },
  h1: { size: 20, bold: true, before: 14, after: 8 },
  h2: { size: 16, bold: true, before: 12, after: 6 },
  h3: { size: 13.5, bold: true, before: 10, after: 5 },
  h4: { size: 12, bold: true, before: 8, after: 4 },
  h5: { size: 10.5, bold: true, before: 6, after: 3 },
  h6: { size: 10, bold: true, before: 6, after: 3 },
};
const LINE_FACTOR = 1.35;
const INDENT = 18;
/** Nesting indents a block by at most this share of the text width, so deep lists keep room for their text. */
const MAX_INDENT_SHARE = 0.5;
const RULE_SPACE = 6;
/** Space around an image or a code. */
const BOX_SPACE = 6;
const TABLE_BEFORE = 4;
const TABLE_AFTER = 8;
/** A heading needs room for itself and this much of what follows, else it moves to the next page. */
const KEEP_WITH_NEXT = 2 * 10 * LINE_FACTOR;

/** Faces a document needs, so only those are embedded. @internal */
export function facesUsed(blocks: readonly Block[]): Set<FaceIndex> {
  const used = new Set<FaceIndex>([0]);
  const add = (bold: boolean, italic: boolean): void =>
    void used.add(((bold ? 1 : 0) + (italic ? 2 : 0)) as FaceIndex);
  for (const block of blocks) {
    if (block.kind === 'text') {
      const bold = ROLES[block.role].bold;
      for (const item of block.inlines) if (item.kind === 'text') add(bold || item.bold, item.italic);
    } else if (block.kind === 'table') {
      for (const row of block.header)
        for (const cell of row)
          for (const item of cell.inlines) {
            if (item.kind === 'text') add(true, item.italic);
          }
      for (const row of block.body)
        for (const cell of row)
          for (const item of cell.inlines) {
            if (item.kind === 'text') add(item.bold, item.italic);
          }
    }
  }
  return used;
}

/**
 * Lays the blocks out on pages: text wrapped at spaces, headings kept with what follows, list items
 * indented with hanging bullets or numbers, rules, and tables (see table-layout).
 * @internal
 */
export async function layoutBlocks(
  blocks: readonly Block[],
  writer: PageWriter,
  faces: FaceSet,
  boxOf: (block: Block, maxWidth: number, maxHeight: number) => Box | undefined = () => undefined,
): Promise<void> {
  let previousAfter = 0;
  for (const block of blocks) {
    if (block.kind === 'pageBreak') {
      if (!writer.atTop()) await writer.newPage();
      previousAfter = 0;
      continue;
    }
    if (block.kind === 'image' || block.kind === 'code') {
      const box = boxOf(block, writer.width, writer.top - writer.bottom);
      if (!box) continue;
      const gap = writer.atTop() ? 0 : Math.max(previousAfter, BOX_SPACE);
      if (!writer.fits(gap + box.height) && !writer.atTop()) await writer.newPage();
      else writer.y -= gap;
      const align = block.kind === 'image' ? block.image.align : block.code.align;
      const free = writer.width - box.width;
      const x = writer.left + (align === 'right' ? free : align === 'center' ? free / 2 : 0);
      box.draw(writer, x, writer.y - box.height);
      writer.y -= box.height;
      previousAfter = BOX_SPACE;
      continue;
    }
    if (block.kind === 'rule') {
      const gap = writer.atTop() ? 0 : Math.max(previousAfter, RULE_SPACE);
      if (!writer.fits(gap + RULE_SPACE)) await writer.newPage();
      else writer.y -= gap;
      writer.line(writer.left, writer.y, writer.right, writer.y, 0.75, 0.6);
      writer.y -= 0.75;
      previousAfter = RULE_SPACE;
      continue;
    }
    if (block.kind === 'table') {
      if (!writer.atTop()) writer.y -= Math.max(previousAfter, TABLE_BEFORE);
      await drawTable(block, writer, faces);
      previousAfter = TABLE_AFTER;
      continue;
    }
    const style = ROLES[block.role];
    const lineHeight = style.size * LINE_FACTOR;
    const x = writer.left + Math.min(block.indent * INDENT, (writer.right - writer.left) * MAX_INDENT_SHARE);
    const inlines = normalizeInlines(block.inlines);
    const lines = wrapInlines(inlines, faces, style.size, style.bold, writer.right - x);
    if (lines.length === 0) continue;
    const gap = writer.atTop() ? 0 : Math.max(previousAfter, style.before);
    const keep = style.bold && block.role !== 'p' && block.role !== 'li' ? KEEP_WITH_NEXT : 0;
    if (!writer.fits(gap + lineHeight + keep) && !writer.atTop()) await writer.newPage();
    else writer.y -= gap;
    const baselineOffset = (lineHeight - (ASCENT + DESCENT) * style.size) / 2 + ASCENT * style.size;
    for (let i = 0; i < lines.length; i++) {
      if (!writer.fits(lineHeight) && !writer.atTop()) await writer.newPage();
      const baseline = writer.y - baselineOffset;
      if (i === 0 && block.bullet !== undefined) {
        const face = faces.pick(false, false);
        const bulletWidth = face.width(block.bullet) * style.size;
        writer.textLine(x - 5 - bulletWidth, baseline, style.size, [
          { face, text: block.bullet, width: bulletWidth, link: undefined },
        ]);
      }
      writer.textLine(x, baseline, style.size, lines[i]!.segments);
      writer.y -= lineHeight;
    }
    previousAfter = style.after;
  }
}
