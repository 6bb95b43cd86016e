import type { Box } from './drawables.js';
import type { FaceSet } from './fonts.js';
import { layoutBlocks } from './layout.js';
import { markupError } from './parse.js';
import type { PageWriter } from './page-writer.js';
import { PAGE } from './template.js';
import type { Block, Inline, TableCell } from './types.js';

/** Space between the page header or footer and the body. */
const GAP = 10;
/** The least body height left between header and footer, in points. */
const MIN_BODY = 72;
const MARKS = /[\uE002\uE003]/g;

function fillInlines(inlines: readonly Inline[], page: string, pages: string): Inline[] {
  return inlines.map((item) =>
    item.kind === 'text' && /[\uE002\uE003]/.test(item.text)
      ? { ...item, text: item.text.replace(MARKS, (mark) => (mark === PAGE ? page : pages)) }
      : item,
  );
}

function fillCells(rows: readonly TableCell[][], page: string, pages: string): TableCell[][] {
  return rows.map((row) => row.map((cell) => ({ ...cell, inlines: fillInlines(cell.inlines, page, pages) })));
}

/** The blocks with `[[page]]` and `[[pages]]` filled in. */
function withPages(blocks: readonly Block[], page: string, pages: string): Block[] {
  return blocks.map((block) => {
    if (block.kind === 'text') return { ...block, inlines: fillInlines(block.inlines, page, pages) };
    if (block.kind === 'table')
      return {
        ...block,
        header: fillCells(block.header, page, pages),
        body: fillCells(block.body, page, pages),
      };
    return block;
  });
}

/**
 * The page header and footer: measured before the body is laid out (their height is taken from
 * the text area of every page), drawn on every page once the page count is known, with
 * `[[page]]` and `[[pages]]` filled in.
 * @internal
 */
export class Furniture {
  #headerHeight = 0;
  #footerHeight = 0;

  constructor(
    private readonly writer: PageWriter,
    private readonly faces: FaceSet,
    private readonly boxOf: (block: Block, maxWidth: number, maxHeight: number) => Box | undefined,
    private readonly header: readonly Block[],
    private readonly footer: readonly Block[],
  ) {}

  #layout(blocks: readonly Block[], page: string, pages: string): () => Promise<void> {
    return () => layoutBlocks(withPages(blocks, page, pages), this.writer, this.faces, this.boxOf);
  }

  /** Measures header and footer and narrows the body area of every page by them. */
  async reserve(): Promise<void> {
    const { writer } = this;
    const top = writer.top;
    const bottom = writer.bottom;
    const parts = [this.header, this.footer]
      .filter((blocks) => blocks.length > 0)
      .map((blocks) => ({ top, bottom, draw: this.#layout(blocks, '999', '999') }));
    const used = await writer.furniture(undefined, parts);
    if (this.header.length > 0) {
      this.#headerHeight = used.shift()!;
      writer.top = top - this.#headerHeight - GAP;
    }
    if (this.footer.length > 0) {
      this.#footerHeight = used.shift()!;
      writer.bottom = bottom + this.#footerHeight + GAP;
    }
    if (writer.top - writer.bottom < MIN_BODY)
      throw markupError(
        `<header> and <footer> leave less than ${MIN_BODY} points of the page for the body; make them shorter`,
      );
    writer.y = writer.top;
  }

  /** Draws header and footer on every page (after the body, so the page count is known), one content stream a page. */
  async draw(): Promise<void> {
    const { writer } = this;
    if (this.header.length === 0 && this.footer.length === 0) return;
    const pages = String(writer.pageCount);
    const pageTop = this.header.length > 0 ? writer.top + this.#headerHeight + GAP : writer.top;
    const pageBottom = this.footer.length > 0 ? writer.bottom - this.#footerHeight - GAP : writer.bottom;
    for (let index = 0; index < writer.pageCount; index++) {
      const page = String(index + 1);
      const parts = [];
      if (this.header.length > 0)
        parts.push({
          top: pageTop,
          bottom: pageTop - this.#headerHeight,
          draw: this.#layout(this.header, page, pages),
        });
      if (this.footer.length > 0)
        parts.push({
          top: pageBottom + this.#footerHeight,
          bottom: pageBottom,
          draw: this.#layout(this.footer, page, pages),
        });
      await writer.furniture(index, parts);
    }
    writer.checkSignal();
  }
}
