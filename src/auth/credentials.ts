/**
 * What the HTTP handler asks the engine when it checks credentials: the principal of an API key,
 * the session of a cookie.
 * @module
 */
import type { Principal } from '../access/principal.js';

/** A signed-in browser's session, as the handler sees it. @internal */
export interface SessionInfo {
  /** Who is signed in. */
  principal: Principal;
  /** The per-session token rendered forms carry. */
  csrf: string;
}

/** Where the handler checks credentials: the engine's key and session stores. @internal */
export interface CredentialStores {
  /**
   * The principal of an API key secret, or undefined when it is no live key; at once (no promise)
   * for a key checked a moment ago.
   */
  verifyKey(secret: string): Principal | undefined | Promise<Principal | undefined>;
  /** The session of a cookie value, or undefined when it is none or has expired. */
  session(token: string): Promise<SessionInfo | undefined>;
}
