import { loadProject } from '../node/project.js';
import { scheduleOf, type StoredTrigger } from '../engine/triggers.js';
import { HELP } from './help.js';
import { EXIT, parseCommand, type CliIo } from './io.js';
import { printWarnings } from './report.js';

/** When and how a trigger fires, in one line: the next slot of a schedule, a poll interval, a hook's URL. @internal */
export function describeTrigger(trigger: StoredTrigger, baseUrl?: string, now: Date = new Date()): string {
  const runs = `runs "${trigger.workflow_name}"`;
  switch (trigger.type) {
    case 'schedule': {
      const next = scheduleOf(trigger).nextRun(now);
      const zone = trigger.schedule_data.timezone ?? 'UTC';
      return `schedule "${trigger.schedule_data.cron}" (${zone}), ${runs}; next ${next ? next.toISOString() : 'never'}`;
    }
    case 'webhook':
      return `webhook POST ${baseUrl ?? ''}/hooks/${encodeURIComponent(trigger.name)}${trigger.webhook_data.secret ? ' (signed)' : ''}, ${runs}`;
    case 'entity':
      return `entity "${trigger.entity_data.entity_name}" ${trigger.entity_data.events.join('/')} every ${trigger.entity_data.interval_seconds ?? 60} s, ${runs}`;
  }
}

/**
 * `stepwire triggers <dir>`: each trigger of the project with how it fires and, for a schedule, its
 * next fire time.
 * @internal
 */
export async function triggersCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals, help } = parseCommand('triggers', args, {}, { min: 1, max: 1 });
  if (help) return (io.out(HELP['triggers']!), EXIT.ok);
  const { engine, problems } = await loadProject(positionals[0]!);
  printWarnings(io, problems);
  const triggers = await engine.triggers.list();
  if (triggers.length === 0) io.out(`no triggers in ${positionals[0]} (add triggers/*.json)`);
  for (const trigger of triggers) io.out(`${trigger.name}: ${describeTrigger(trigger)}`);
  return EXIT.ok;
}
