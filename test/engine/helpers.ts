import { Engine, MemoryChat, MemorySpreadsheets, type EngineOptions } from '../../src/index.js';
import { customersEntity, ordersCustomerFk, ordersEntity, shopSheets } from '../fixtures.js';

/** An engine on the shop data with customers, orders and their enforced foreign key. */
export async function shopEngine(options: EngineOptions = {}) {
  const spreadsheets = new MemorySpreadsheets(shopSheets());
  const chat = new MemoryChat();
  const engine = new Engine({ spreadsheets, chat, ...options });
  await engine.catalog.registerEntity(customersEntity);
  await engine.catalog.registerEntity(ordersEntity);
  await engine.catalog.createRelationship(ordersCustomerFk);
  return { engine, spreadsheets, chat };
}
