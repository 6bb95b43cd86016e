export {
  ActionRegistry,
  actionKey,
  type ActionContext,
  type ActionDefinition,
  type ActionStub,
  type StubBehaviour,
} from './registry.js';
export { getEntityAction } from './get-entity.js';
export { writeEntityAction } from './write-entity.js';
export { dummyTaskAction } from './dummy-task.js';
export { sendMessageAction } from './send-message.js';
export { createPdfAction } from './create-pdf.js';
export { sendEmailAction } from './send-email.js';
export { uploadFileAction } from './upload-file.js';
export { runWorkflowAction } from './run-workflow.js';
export { contentTypeOf } from '../adapters/content-type.js';
