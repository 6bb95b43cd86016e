/**
 * Pictures of workflows and runs, made on the server as plain SVG (and text for terminals): pure
 * functions of a workflow definition or a run record, edge-safe.
 * @module
 */
export { workflowGraphSvg, type WorkflowGraphOptions } from './graph.js';
export { runTimelineSvg, type RunTimelineOptions } from './timeline.js';
export { runTimelineText, type RunTimelineTextOptions } from './text-timeline.js';
