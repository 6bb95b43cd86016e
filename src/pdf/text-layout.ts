import type { FaceSet } from './fonts.js';
import type { Segment } from './page-writer.js';
import type { Inline } from './types.js';

/** A laid-out line: its segments and total width in points. @internal */
export interface Line {
  segments: Segment[];
  width: number;
}

/** Natural width (longest line without wrapping) and widest word, in points. @internal */
export interface InlineSize {
  natural: number;
  minWord: number;
  hasBreak: boolean;
}

const EPSILON = 0.001;
const SPACE = 32;

/**
 * Collapses white space across inline pieces as HTML does: no space at the start, after a line
 * break, before a break or at the end; never two spaces in a row. Tables are not expected here.
 * @internal
 */
export function normalizeInlines(inlines: readonly Inline[]): readonly Inline[] {
  if (inlines.length === 1) {
    const only = inlines[0]!;
    if (only.kind === 'text' && !/^ | $| {2}/.test(only.text)) return inlines;
  }
  const out: Inline[] = [];
  let afterSpace = true;
  const trimLast = (): void => {
    const last = out[out.length - 1];
    if (last?.kind === 'text' && last.text.endsWith(' ')) {
      const text = last.text.slice(0, -1);
      if (text === '') out.pop();
      else out[out.length - 1] = { ...last, text };
    }
  };
  for (const item of inlines) {
    if (item.kind !== 'text') {
      if (item.kind === 'break') trimLast();
      out.push(item);
      afterSpace = true;
      continue;
    }
    let text = item.text.includes('  ') ? item.text.replace(/ {2,}/g, ' ') : item.text;
    if (afterSpace && text.startsWith(' ')) text = text.slice(1);
    if (text === '') continue;
    afterSpace = text.endsWith(' ');
    out.push(text === item.text ? item : { ...item, text });
  }
  trimLast();
  return out;
}

/** Measures normalized inlines at `size`: natural width, widest word, whether there are breaks. @internal */
export function measureInlines(
  inlines: readonly Inline[],
  faces: FaceSet,
  size: number,
  bold: boolean,
): InlineSize {
  let natural = 0;
  let minWord = 0;
  let line = 0;
  let word = 0;
  let hasBreak = false;
  for (const item of inlines) {
    if (item.kind !== 'text') {
      hasBreak = true;
      natural = Math.max(natural, line);
      minWord = Math.max(minWord, word);
      line = 0;
      word = 0;
      continue;
    }
    const face = faces.pick(bold || item.bold, item.italic);
    const text = item.text;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const w = face.charWidth(code);
      line += w;
      if (code === SPACE) {
        if (word > minWord) minWord = word;
        word = 0;
      } else word += w;
    }
  }
  natural = Math.max(natural, line);
  minWord = Math.max(minWord, word);
  return { natural: natural * size, minWord: minWord * size, hasBreak };
}

/** Appends a segment to a line, merging with the previous one when face and link match. */
function append(line: Segment[], segment: Segment): void {
  const last = line[line.length - 1];
  if (last && last.face === segment.face && last.link === segment.link) {
    line[line.length - 1] = { ...last, text: last.text + segment.text, width: last.width + segment.width };
  } else line.push(segment);
}

/** Segments of normalized inlines on one line (caller knows they fit and have no breaks). @internal */
export function singleLine(inlines: readonly Inline[], faces: FaceSet, size: number, bold: boolean): Line {
  const segments: Segment[] = [];
  let width = 0;
  for (const item of inlines) {
    if (item.kind !== 'text') continue;
    const face = faces.pick(bold || item.bold, item.italic);
    const w = face.width(item.text) * size;
    append(segments, { face, text: item.text, width: w, link: item.link });
    width += w;
  }
  return { segments, width };
}

/**
 * Breaks normalized inlines into lines no wider than `maxWidth`: greedy, at spaces; a word wider
 * than the line is cut between characters; a `break` always starts a new line.
 * @internal
 */
export function wrapInlines(
  inlines: readonly Inline[],
  faces: FaceSet,
  size: number,
  bold: boolean,
  maxWidth: number,
): Line[] {
  const lines: Line[] = [];
  let line: Segment[] = [];
  let lineWidth = 0;
  let word: Segment[] = [];
  let wordWidth = 0;
  let space: Segment | undefined;

  const pushLine = (): void => {
    lines.push({ segments: line, width: lineWidth });
    line = [];
    lineWidth = 0;
  };
  const cutWord = (): void => {
    for (const piece of word) {
      for (let i = 0; i < piece.text.length; i++) {
        const w = piece.face.charWidth(piece.text.charCodeAt(i)) * size;
        if (line.length > 0 && lineWidth + w > maxWidth + EPSILON) pushLine();
        append(line, { face: piece.face, text: piece.text[i]!, width: w, link: piece.link });
        lineWidth += w;
      }
    }
  };
  const commitWord = (): void => {
    if (word.length === 0) return;
    let spaceWidth = line.length > 0 && space ? space.width : 0;
    if (line.length > 0 && lineWidth + spaceWidth + wordWidth > maxWidth + EPSILON) {
      pushLine();
      spaceWidth = 0;
    }
    if (line.length === 0 && wordWidth > maxWidth + EPSILON) cutWord();
    else {
      if (spaceWidth > 0 && space) append(line, space);
      for (const piece of word) append(line, piece);
      lineWidth += spaceWidth + wordWidth;
    }
    word = [];
    wordWidth = 0;
    space = undefined;
  };

  for (const item of inlines) {
    if (item.kind !== 'text') {
      commitWord();
      pushLine();
      space = undefined;
      continue;
    }
    const face = faces.pick(bold || item.bold, item.italic);
    const parts = item.text.split(' ');
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) {
        commitWord();
        space = { face, text: ' ', width: face.charWidth(SPACE) * size, link: item.link };
      }
      const part = parts[i]!;
      if (part !== '') {
        const w = face.width(part) * size;
        word.push({ face, text: part, width: w, link: item.link });
        wordWidth += w;
      }
    }
  }
  commitWord();
  if (line.length > 0) pushLine();
  return lines;
}
