/**
 * A local fake of Slack's `chat.postMessage`, an incoming webhook and a generic JSON webhook, on
 * 127.0.0.1. It records every request and can inject faults.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json?: unknown;
}

/** A fault served instead of the normal answer. */
export interface SlackFault {
  /** HTTP status. */
  status: number;
  /** Body text; for chat.postMessage JSON is usual. */
  body?: string;
  /** `Retry-After` header value. */
  retryAfter?: string;
  /** Wait this long (ms) before answering. */
  delayMs?: number;
  /** Send the headers, then one space of body every this many ms, never ending. */
  dripMs?: number;
}

/** The fake Slack server. */
export interface FakeSlack {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  /** Base of the Web API: `http://127.0.0.1:PORT/api/`. */
  apiUrl: string;
  /** An incoming webhook URL. */
  webhookUrl: string;
  /**
   * A generic JSON webhook URL (answers `{ "id": "m<n>" }`); it honours `Idempotency-Key`: a key
   * it has seen posts nothing and answers the first id.
   */
  genericUrl: string;
  /** The bot token it accepts. */
  token: string;
  /** Every request, in order. */
  requests: RecordedRequest[];
  /** Messages posted successfully as `{ channel, text }`. */
  posted: { channel: string; text: string }[];
  /** Queues faults answered to the next requests, one each. */
  fail(...faults: SlackFault[]): void;
  /** Forgets recorded requests, posted messages and queued faults. */
  reset(): void;
  close(): Promise<void>;
}

/** Channels that exist; others answer `channel_not_found`. */
const CHANNELS = new Set(['general', 'ops', 'C0123456']);

/** Starts the fake on a free port. */
export async function startFakeSlack(): Promise<FakeSlack> {
  const requests: RecordedRequest[] = [];
  const posted: { channel: string; text: string }[] = [];
  const faults: SlackFault[] = [];
  /** Message id by `Idempotency-Key`, for the generic webhook. */
  const keys = new Map<string, string>();
  const token = 'xoxb-test-token';
  let ts = 1_700_000_000;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const record: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
    };
    try {
      record.json = JSON.parse(body);
    } catch {
      // not JSON; kept as text
    }
    requests.push(record);
    const fault = faults.shift();
    if (fault) {
      if (fault.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      if (res.destroyed) return;
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
      if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
      if (fault.dripMs) {
        res.writeHead(fault.status, headers);
        const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), fault.dripMs);
        res.on('close', () => clearInterval(drip));
        return;
      }
      res.writeHead(fault.status, headers).end(fault.body ?? '');
      return;
    }
    const json = record.json as Record<string, unknown> | undefined;
    if (record.path === '/api/chat.postMessage' && record.method === 'POST') {
      const answer = (value: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(value));
      };
      if (req.headers.authorization !== `Bearer ${token}`)
        return answer({ ok: false, error: 'invalid_auth' });
      if (!json || typeof json.channel !== 'string' || typeof json.text !== 'string')
        return answer({ ok: false, error: 'invalid_arguments' });
      if (!CHANNELS.has(json.channel)) return answer({ ok: false, error: 'channel_not_found' });
      posted.push({ channel: json.channel, text: json.text });
      const id = `${ts++}.000100`;
      return answer({
        ok: true,
        channel: json.channel,
        ts: id,
        message: { type: 'message', text: json.text, ts: id },
      });
    }
    if (record.path === '/services/T000/B000/XXXX' && record.method === 'POST') {
      if (!json || typeof json.text !== 'string') {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid_payload');
        return;
      }
      posted.push({ channel: '#webhook', text: json.text });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (record.path === '/hooks/generic' && record.method === 'POST') {
      if (!json || typeof json.channel !== 'string' || typeof json.message !== 'string') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad body"}');
        return;
      }
      const key = req.headers['idempotency-key'];
      let id = typeof key === 'string' ? keys.get(key) : undefined;
      if (id === undefined) {
        posted.push({ channel: json.channel, text: json.message });
        id = `m${posted.length}`;
        if (typeof key === 'string') keys.set(key, id);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no_service');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    apiUrl: `${url}api/`,
    webhookUrl: `${url}services/T000/B000/XXXX`,
    genericUrl: `${url}hooks/generic`,
    token,
    requests,
    posted,
    fail: (...more) => faults.push(...more),
    reset: () => {
      requests.length = 0;
      posted.length = 0;
      faults.length = 0;
      keys.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
