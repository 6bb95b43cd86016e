import { describe, expectTypeOf, it } from 'vitest';
import {
  Engine,
  l2,
  workflow,
  type ApplicationBody,
  type Entity,
  type EntityBody,
  type RelationshipBody,
  type RunRecord,
  type TriggerBody,
  type UpsertResult,
  type Workflow,
  type WorkflowBody,
} from '../../src/index.js';

const engine = new Engine();
const sheet = { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } };

describe('the registries take the definition types', () => {
  it('each create and put takes its resource as written', () => {
    expectTypeOf(engine.catalog.registerEntity).parameter(0).toEqualTypeOf<EntityBody>();
    expectTypeOf(engine.catalog.createEntity).parameter(0).toEqualTypeOf<EntityBody>();
    expectTypeOf(engine.catalog.upsertEntity).parameter(0).toEqualTypeOf<EntityBody>();
    expectTypeOf(engine.catalog.putEntity).parameter(0).toEqualTypeOf<EntityBody>();
    expectTypeOf(engine.catalog.createRelationship).parameter(0).toEqualTypeOf<RelationshipBody>();
    expectTypeOf(engine.workflows.create).parameter(0).toEqualTypeOf<WorkflowBody>();
    expectTypeOf(engine.workflows.put).parameter(0).toEqualTypeOf<WorkflowBody>();
    expectTypeOf(engine.workflows.replace).parameter(0).toEqualTypeOf<WorkflowBody>();
    expectTypeOf(engine.workflows.validate).parameter(0).toEqualTypeOf<WorkflowBody>();
    expectTypeOf(engine.triggers.create).parameter(0).toEqualTypeOf<TriggerBody>();
    expectTypeOf(engine.applications.put).parameter(1).toEqualTypeOf<ApplicationBody>();
    expectTypeOf(engine.scripts.put).parameter(1).toEqualTypeOf<string>();
  });

  it('create and put answer alike in every registry', () => {
    expectTypeOf(engine.catalog.createEntity).returns.resolves.toEqualTypeOf<Entity>();
    expectTypeOf(engine.catalog.putEntity).returns.resolves.toEqualTypeOf<UpsertResult>();
    expectTypeOf(engine.workflows.create).returns.resolves.toEqualTypeOf<Workflow>();
    expectTypeOf(engine.workflows.put).returns.resolves.toEqualTypeOf<{
      workflow: Workflow;
      created: boolean;
    }>();
    expectTypeOf(engine.catalog.putEntity).returns.resolves.toHaveProperty('created');
    expectTypeOf(engine.applications.put).returns.resolves.toHaveProperty('created');
    expectTypeOf(engine.scripts.put).returns.resolves.toHaveProperty('created');
  });

  it('refuse a wrong literal, naming the field', () => {
    void engine.catalog.createEntity({
      name: 'orders',
      columns: [{ name: 'id', type: 'NUMBER' }],
      primary_key: ['id'],
      spreadsheet_config: sheet,
    });
    void engine.catalog.createEntity({
      name: 'orders',
      // @ts-expect-error "TEXT" is no column type ("STRING" is)
      columns: [{ name: 'id', type: 'TEXT' }],
      primary_key: ['id'],
      spreadsheet_config: sheet,
    });
    void engine.catalog.putEntity({
      name: 'orders',
      columns: [{ name: 'id', type: 'NUMBER' }],
      // @ts-expect-error the field is primary_key
      primaryKey: ['id'],
      spreadsheet_config: sheet,
    });
    // @ts-expect-error a relationship needs its type and foreign_key_config
    void engine.catalog.createRelationship({ name: 'r', source_entity: 'a', target_entity: 'b' });
    void engine.workflows.create({
      name: 'w',
      // @ts-expect-error there is no step type "lambda"
      steps: [{ name: 's', type: 'lambda' }],
      wires: [],
    });
    // @ts-expect-error an application names its start screen
    void engine.applications.put('app', { screens: [] });
    // @ts-expect-error a schedule trigger takes schedule_data.cron
    void engine.triggers.create({ name: 't', type: 'schedule', workflow_name: 'w', cron: '0 9 * * *' });
  });
});

describe('engine.run and engine.start', () => {
  const invoice = workflow('invoice')
    .input({ schema: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] } })
    .step('a', l2('platform', 'dummy', 'dummy_task'))
    .build();

  it('take a name with any input', () => {
    expectTypeOf(engine.run('invoice', { anything: true })).resolves.toEqualTypeOf<RunRecord>();
    void engine.start('invoice');
  });

  it('take a definition, whose input type checks the input', () => {
    void engine.run(invoice, { id: 1 });
    void engine.start(invoice, { id: 1 });
    // @ts-expect-error id is a number
    void engine.run(invoice, { id: '1' });
    // @ts-expect-error id is a number
    void engine.start(invoice, { id: '1' });
  });
});
