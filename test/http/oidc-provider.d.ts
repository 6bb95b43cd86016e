// The part of oidc-provider (which ships no types) that test/http/oidc.test.ts uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** An OpenID provider: its configuration is checked by the package at run time. */
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** The request listener of a Node `http` server. */
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
