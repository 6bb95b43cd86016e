// Reads a picture with a strict XML parser (saxes: well-formedness errors throw), as a small tree.
import { SaxesParser } from 'saxes';

/** An element of a parsed document. */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, without its children's. */
  text: string;
}

/** Parses `text` as XML; throws on anything that is not well-formed. */
export function parseXml(text: string): XmlElement {
  const parser = new SaxesParser();
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const open: XmlElement[] = [root];
  parser.on('error', (error) => {
    throw error;
  });
  parser.on('opentag', (tag) => {
    const element: XmlElement = {
      name: tag.name,
      attributes: tag.attributes as Record<string, string>,
      children: [],
      text: '',
    };
    open.at(-1)!.children.push(element);
    if (!tag.isSelfClosing) open.push(element);
  });
  parser.on('closetag', (tag) => {
    if (!tag.isSelfClosing) open.pop();
  });
  parser.on('text', (value) => (open.at(-1)!.text += value));
  parser.write(text).close();
  const [document] = root.children;
  if (!document) throw new Error('no root element');
  return document;
}

/** Every element below `element` (itself included) that `match` accepts, in document order. */
export function findAll(element: XmlElement, match: (e: XmlElement) => boolean): XmlElement[] {
  const found = match(element) ? [element] : [];
  for (const child of element.children) found.push(...findAll(child, match));
  return found;
}

/** Elements named `name` whose class list holds `className`. */
export function byClass(element: XmlElement, name: string, className: string): XmlElement[] {
  return findAll(
    element,
    (e) => e.name === name && (e.attributes['class'] ?? '').split(/\s+/).includes(className),
  );
}

/** The text a `<text>` shows, or its `<title>` (the whole text) when it was cut. */
export function fullText(element: XmlElement): string {
  const title = element.children.find((c) => c.name === 'title');
  return title ? title.text : element.text;
}
