import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { workflowGraphSvg, type RunRecord, type Workflow } from '../../src/index.js';
import { byClass, findAll, fullText, parseXml, type XmlElement } from './xml.js';
import { MARKUP_NAME, thirtySteps } from './workflows.js';

const invoice = JSON.parse(readFileSync('examples/invoices/workflows/invoice.json', 'utf8')) as Workflow;

interface Box {
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The step, input and output boxes of a graph, by the name they show. */
function boxes(svg: XmlElement): Box[] {
  return findAll(
    svg,
    (e) => e.name === 'g' && ['step', 'input', 'output'].includes(e.attributes['class']!),
  ).map((group) => {
    const rect = group.children.find((c) => /-shape$/.test(c.attributes['class'] ?? ''))!;
    const [x, y, width, height] = ['x', 'y', 'width', 'height'].map((k) => Number(rect.attributes[k]));
    return {
      name: fullText(byClass(group, 'text', 'name')[0]!),
      x: x!,
      y: y!,
      width: width!,
      height: height!,
    };
  });
}

describe('workflowGraphSvg', () => {
  it('draws 30 steps as well-formed SVG: one box each, the input and the output, no two boxes overlapping', () => {
    const workflow = thirtySteps();
    const svg = parseXml(workflowGraphSvg(workflow));
    expect(svg.name).toBe('svg');
    expect(byClass(svg, 'rect', 'step-shape')).toHaveLength(30);
    expect(byClass(svg, 'g', 'step')).toHaveLength(30);
    const drawn = boxes(svg);
    expect(drawn.map((b) => b.name).sort()).toEqual(
      ['input', 'result', ...workflow.steps.map((s) => s.name)].sort(),
    );
    for (const [i, a] of drawn.entries())
      for (const b of drawn.slice(i + 1)) {
        const apart =
          a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        expect(apart, `${a.name} and ${b.name} overlap`).toBe(true);
      }
  });

  it('draws a chain of 600 steps that each read the input, every arrow included, without running out of stack', () => {
    const steps = Array.from({ length: 600 }, (_, i) => ({
      name: `s${i}`,
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: {
          customer: '{{input.customer_id}}',
          previous: i === 0 ? null : `{{s${i - 1}.customer}}`,
        },
      },
    }));
    const svg = parseXml(workflowGraphSvg({ name: 'long', steps, wires: [] } as unknown as Workflow));
    expect(byClass(svg, 'g', 'step')).toHaveLength(600);
    const edges = findAll(svg, (e) => e.name === 'path' && /\bedge\b/.test(e.attributes['class'] ?? ''));
    expect(edges).toHaveLength(600 + 599);
    const at = new Map(boxes(svg).map((b) => [b.name, b]));
    for (let i = 1; i < 600; i++) expect(at.get(`s${i}`)!.y).toBeGreaterThan(at.get(`s${i - 1}`)!.y);
  });

  it('puts every step below the steps it depends on, arrows pointing down', () => {
    const svg = parseXml(workflowGraphSvg(thirtySteps()));
    const at = new Map(boxes(svg).map((b) => [b.name, b]));
    const below = (upper: string, lower: string) =>
      expect(at.get(lower)!.y, `${lower} below ${upper}`).toBeGreaterThan(
        at.get(upper)!.y + at.get(upper)!.height,
      );
    below('input', 'read');
    below('read', 'check_1');
    below('check_4', 'merge');
    for (let i = 2; i <= 12; i++) below(`stage_${i - 1}`, `stage_${i}`);
    below('stage_12', MARKUP_NAME);
    below(MARKUP_NAME, 'result');
    for (const path of findAll(
      svg,
      (e) => e.name === 'path' && /\bedge\b/.test(e.attributes['class'] ?? ''),
    )) {
      const numbers = path.attributes['d']!.match(/-?[\d.]+/g)!.map(Number);
      expect(numbers.at(-1)!, path.attributes['d']).toBeGreaterThan(numbers[1]!);
    }
  });

  it('marks wires, references, conditions and for_each sources as arrows of their own kind', () => {
    const svg = parseXml(workflowGraphSvg(thirtySteps()));
    const tips = (kind: string) => byClass(svg, 'path', `edge-${kind}`).map((p) => p.children[0]!.text);
    expect(tips('wire')).toEqual([
      'wire: check_4 → merge.d',
      'wire: input.id → audit.id',
      'wire: each_invoice.failed → audit.failed',
    ]);
    expect(tips('for_each')).toEqual(['for_each: {{read.rows}}']);
    expect(tips('condition')).toEqual(Array(3).fill('condition: if read.kind'));
    // A loop's {{item...}} is not an arrow from anywhere.
    expect(tips('reference').some((t) => t.includes('item'))).toBe(false);
  });

  it("draws no arrow from a step named item into a for_each step's {{item}}: there it is the loop's item", () => {
    const dummy = (input_data: Record<string, unknown>) => ({
      type: 'l2' as const,
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
    });
    const svg = parseXml(
      workflowGraphSvg({
        name: 'shadow',
        steps: [
          { name: 'item', ...dummy({ list: [1, 2] }) },
          { name: 'each', ...dummy({ x: '{{item.n}}', i: '{{item_index}}' }), for_each: '{{item.list}}' },
          { name: 'after', ...dummy({ y: '{{item.list}}' }) },
        ],
        wires: [],
      } as Workflow),
    );
    const tips = (kind: string) => byClass(svg, 'path', `edge-${kind}`).map((p) => p.children[0]!.text);
    // The for_each source and a later step read the step named item; the loop's data does not.
    expect(tips('for_each')).toEqual(['for_each: {{item.list}}']);
    expect(tips('reference')).toEqual(['reference: {{item.list}}']);
  });

  it('writes conditions, for_each, on_error and retry into the boxes', () => {
    const svg = parseXml(workflowGraphSvg(thirtySteps()));
    const lines = (kind: string) => byClass(svg, 'text', `line-${kind}`).map(fullText);
    expect(lines('condition')).toEqual(Array(3).fill('if {{read.kind}} = "big"'));
    expect(lines('for_each')).toEqual(['for each {{read.rows}}, 4 at once']);
    expect(lines('on_error')).toEqual(['on error: continue', 'on error: continue']);
    expect(lines('retry')).toEqual(['retry: 3 attempts']);
    expect(byClass(svg, 'rect', 'stack')).toHaveLength(1);
  });

  it('shows a step name with markup as text, and cuts long names with the whole name in a tooltip', () => {
    const text = workflowGraphSvg(thirtySteps());
    expect(text).not.toContain('<b>');
    const svg = parseXml(text);
    expect(findAll(svg, (e) => e.name === 'b')).toEqual([]);
    const names = byClass(svg, 'text', 'name');
    expect(names.map((n) => n.text)).toContain(MARKUP_NAME);
    const long = names.find((n) => fullText(n).startsWith('a_step_with'))!;
    expect(long.text).toMatch(/…$/);
    expect(fullText(long)).toBe('a_step_with_a_rather_long_name_that_will_not_fit_in_its_box');
  });

  it('keeps text XML cannot hold out of the picture', () => {
    const workflow: Workflow = { ...invoice, name: 'odd', description: undefined };
    workflow.steps = [{ ...invoice.steps[0]!, name: 'bell\u0007 and \uD800 lone' }];
    workflow.workflow_output = undefined;
    const svg = parseXml(workflowGraphSvg(workflow));
    expect(byClass(svg, 'text', 'name').map((n) => n.text)).toContain('bell\uFFFD and \uFFFD lone');
  });

  it('shows the status each step had in a run', () => {
    const run = {
      steps: [
        { name: 'customer', status: 'succeeded' },
        { name: 'orders', status: 'failed' },
      ],
    } as RunRecord;
    const svg = parseXml(workflowGraphSvg(invoice, { run }));
    const statuses = byClass(svg, 'g', 'step').map((g) => g.attributes['data-status'] ?? null);
    expect(statuses).toEqual(['succeeded', 'failed', null, null, null, null]);
    expect(byClass(svg, 'rect', 'status').map((r) => r.attributes['fill'])).toEqual(['#1a7f37', '#cf222e']);
  });

  it('reads for_each, concurrency and on_error as stored workflows have them', () => {
    const stored = JSON.parse(
      readFileSync('examples/invoices/workflows/open_invoices.json', 'utf8'),
    ) as Workflow;
    const svg = parseXml(workflowGraphSvg(stored));
    const lines = (kind: string) => byClass(svg, 'text', `line-${kind}`).map(fullText);
    expect(lines('for_each')).toEqual(['for each {{batch.table}}, 2 at once']);
    expect(lines('on_error')).toEqual(['on error: continue']);
    expect(lines('detail')).toContain('runs workflow open_invoice');
    expect(byClass(svg, 'path', 'edge-for_each').map((p) => p.children[0]!.text)).toEqual([
      'for_each: {{batch.table}}',
    ]);
  });

  it('leaves the input out when no step reads it', () => {
    const workflow: Workflow = {
      name: 'lonely',
      steps: [
        { name: 'only', type: 'l2', l2_data: { provider: 'p', module: 'm', action: 'a', input_data: {} } },
      ],
      wires: [],
    };
    const svg = parseXml(workflowGraphSvg(workflow));
    expect(boxes(svg).map((b) => b.name)).toEqual(['only']);
    expect(byClass(svg, 'g', 'legend')).toEqual([]);
  });
});
