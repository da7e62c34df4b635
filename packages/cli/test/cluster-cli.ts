// Shared by the tests of the commands that reach a cluster: the CLI run in-process with captured
// output, a kubeconfig file for an in-process API server, and (from the controller's test helpers)
// every form a private key's bytes could leak in.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { KubeApiServer } from '@extlb/kube-api-server';
import { main } from '../src/main.js';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export async function extlb(args: string[], stdin = ''): Promise<Run> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  err.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const input = new PassThrough();
  input.end(stdin);
  const code = await main(args, { stdin: input, stdout: out, stderr: err, cwd: process.cwd() });
  return { code, stdout, stderr };
}

/** A kubeconfig file for `api` (as `token`), removed after the test. */
export function kubeconfigFile(t: { after: (fn: () => unknown) => void }, api: KubeApiServer, token?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'extlb-kubeconfig-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return api.writeKubeconfig(join(dir, 'config'), token === undefined ? {} : { token });
}

export { keyForms } from '../../controller/test/helpers.js';
