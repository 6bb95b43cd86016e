/* global getEntity, writeEntity */
// Appends the row the form filled in (the `row` step's table) to the customers entity.
writeEntity('customers', getEntity('row'));
