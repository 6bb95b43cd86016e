/**
 * What the HTML renderers of screens share: escaping, the render context, screen addresses.
 * @module
 */
import type { ResolvedScreen } from './types.js';

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** What the renderers of components share. @internal */
export interface RenderContext {
  appBase: string;
  screen: ResolvedScreen;
  headings: number;
  /** The session's form token, put in every form. */
  csrf: string | undefined;
}

/** A full address from an app-relative `/screens/...` href; anything else falls back to the app. @internal */
export function screenHref(appBase: string, href: string): string {
  return href.startsWith('/screens/') && !href.startsWith('/screens//') ? `${appBase}${href}` : `${appBase}/`;
}
