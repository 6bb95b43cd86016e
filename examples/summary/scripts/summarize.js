/* global getEntity, writeEntity */
// Runs in the sandbox: getEntity(name) gives the rows of an input entity as objects,
// writeEntity(name, rows) appends rows to an output entity (all or nothing).
const totals = new Map();
for (const order of getEntity('orders')) {
  const total = totals.get(order.customer_id) ?? { customer_id: order.customer_id, orders: 0, total: 0 };
  total.orders += 1;
  total.total = Math.round((total.total + order.amount) * 100) / 100;
  totals.set(order.customer_id, total);
}
console.log(`summarized ${totals.size} customers`);
writeEntity('order_totals', [...totals.values()]);
