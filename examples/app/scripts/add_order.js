/* global getEntity, writeEntity */
// Appends the order the form describes (the `row` step's table) under the next order number: one
// more than the largest (the `last` step's aggregate read), or 1 for the first order.
const [{ last }] = getEntity('last');
const [order] = getEntity('row');
writeEntity('orders', [{ order_id: (last ?? 0) + 1, ...order }]);
