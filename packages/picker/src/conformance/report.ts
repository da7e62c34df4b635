/** Conformance reports for people (one line per rule) and for machines (YAML). */
import { stringify } from 'yaml';
import type { ConformanceReport } from './kit.js';

const LABEL = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' } as const;

export function formatReportText(report: ConformanceReport): string {
  const width = Math.max(...report.results.map((r) => r.id.length));
  const lines = [`Endpoint Picker Protocol conformance: ${report.picker}`, ''];
  for (const r of report.results) {
    lines.push(`${LABEL[r.status]}  ${r.id.padEnd(width)}  ${r.title}`);
    lines.push(`      ${' '.repeat(width)}  ${r.detail}`);
  }
  const s = report.summary;
  lines.push('', `${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped in ${report.durationMs} ms`);
  return `${lines.join('\n')}\n`;
}

export function formatReportYaml(report: ConformanceReport): string {
  return stringify({
    apiVersion: 'extlb.dev/v1alpha1',
    kind: 'PickerConformanceReport',
    picker: report.picker,
    startedAt: report.startedAt,
    durationMs: report.durationMs,
    summary: report.summary,
    rules: report.results.map((r) => ({ id: r.id, status: r.status, title: r.title, requirement: r.requirement, detail: r.detail })),
  });
}
