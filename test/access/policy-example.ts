// The worked example of docs/security.md: sales people see their own customers, a manager sees all,
// nobody but finance sees credit_limit. Shared by the access tests on memory and on PostgreSQL.
import type { AccessPolicy, CellValue, Principal } from '../../src/index.js';

export const customers = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
    { name: 'owner', type: 'STRING' as const },
    { name: 'region', type: 'STRING' as const },
    { name: 'credit_limit', type: 'NUMBER' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

export const CUSTOMER_ROWS: CellValue[][] = [
  ['id', 'name', 'owner', 'region', 'credit_limit'],
  [1, 'Acme', 'alice@example.com', 'north', 5000],
  [2, 'Globex', 'bob@example.com', 'south', 12000],
  [3, 'Initech', 'alice@example.com', 'south', 800],
  [4, 'Umbrella', 'carol@example.com', 'north', 30000],
];

export const policy: AccessPolicy = {
  roles: {
    sales: { grants: ['entity.read:customers', 'entity.write:customers', 'workflow.run', 'runs.read_own'] },
    manager: { grants: ['entity.read', 'runs.read', 'definitions.read'] },
    finance: { grants: ['entity.read:customers', 'entity.write:customers'] },
    admin: { grants: ['*'] },
    nobody: { grants: [] },
  },
  rows: [
    {
      entity: 'customers',
      roles: ['sales'],
      filters: [{ column: 'owner', operator: 'EQUALS', value: '{{user.email}}' }],
    },
  ],
  columns: [{ entity: 'customers', roles: ['sales', 'manager'], hidden: ['credit_limit'] }],
};

export const alice: Principal = { id: 'u-alice', kind: 'user', roles: ['sales'], email: 'alice@example.com' };
export const bob: Principal = { id: 'u-bob', kind: 'user', roles: ['sales'], email: 'bob@example.com' };
export const manager: Principal = {
  id: 'u-mona',
  kind: 'user',
  roles: ['manager'],
  email: 'mona@example.com',
};
export const finance: Principal = { id: 'u-fin', kind: 'user', roles: ['finance'], email: 'fin@example.com' };
export const outsider: Principal = { id: 'u-out', kind: 'user', roles: ['nobody'] };
