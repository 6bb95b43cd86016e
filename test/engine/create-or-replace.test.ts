import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, type Component } from '../../src/index.js';
import { customersEntity, shopSheets } from '../fixtures.js';

describe('create-or-replace called several times at once for a new name', () => {
  it('tells exactly one caller it created the entity, the application or the script', async () => {
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets(shopSheets()) });
    const three = <T>(call: () => Promise<T>) => Promise.all([call(), call(), call()]);
    const entities = await three(() => engine.catalog.upsertEntity(customersEntity));
    expect(entities.map((e) => e.created).sort()).toEqual([false, false, true]);
    const text: Component = { name: 't', type: 'text', text: { contents: 'Hi' } };
    const screen = { url: 'home', components: [[text]] };
    const apps = await three(() =>
      engine.applications.put('app', { start_screen_url: 'home', screens: [screen] }),
    );
    expect(apps.map((a) => a.created).sort()).toEqual([false, false, true]);
    const scripts = await three(() => engine.scripts.put('s.js', 'writeEntity("x", [])'));
    expect(scripts.map((s) => s.created).sort()).toEqual([false, false, true]);
    // Later calls replace.
    expect((await engine.scripts.put('s.js', '')).created).toBe(false);
    expect(await engine.scripts.get('s.js')).toBe('');
  });
});
