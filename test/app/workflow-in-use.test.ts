import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { isStepwireError, type Application } from '../../src/index.js';
import { call } from '../http/helpers.js';
import { appEngine, shopApp } from './helpers.js';

describe('deleting a workflow that application forms run', () => {
  it('is refused with a conflict naming the forms and their application, and keeps the workflow', async () => {
    const { engine } = await appEngine();
    const refused = await engine.workflows.delete('note').catch((error: unknown) => error);
    expect(isStepwireError(refused) && refused.code).toBe('conflict');
    expect((refused as Error).message).toBe(
      'workflow "note" is run by forms "add" of application "shop", "again" of application "shop",' +
        ' "extra" of application "shop": change or delete them first',
    );
    expect(await engine.workflows.get('note')).toMatchObject({ name: 'note' });
    const http = await call(createHandler(engine), 'DELETE', '/workflows/lookup');
    expect(http.status).toBe(409);
    expect(http.body.detail).toBe(
      'workflow "lookup" is run by form "lookup" of application "shop": change or delete it first',
    );
    // The form still runs its workflow.
    const app = await engine.applications.open('shop');
    expect((await app.submit('start', 'lookup', { customer_id: '2' })).ok).toBe(true);
  });

  it('names triggers and forms together, and goes through once neither refers to it', async () => {
    const { engine } = await appEngine();
    await engine.triggers.create({
      name: 'hook',
      type: 'webhook',
      workflow_name: 'explode',
      webhook_data: {},
    });
    await expect(engine.workflows.delete('explode')).rejects.toThrow(
      'workflow "explode" is started by trigger "hook" and run by form "boom" of application "shop": change or delete them first',
    );
    await engine.triggers.delete('hook');
    const app = shopApp() as Application;
    app.screens = app.screens.map((screen) => ({
      ...screen,
      components: screen.components.map((row) => row.filter((component) => component.name !== 'boom')),
    }));
    await engine.applications.put('shop', app);
    expect(await engine.workflows.delete('explode')).toBe(true);
  });
});
