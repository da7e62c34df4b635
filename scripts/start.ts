// `npm start`: extlb's main job on the bundled examples. Every manifest under examples/ is
// validated as the API server would, then each example folder is converted into an Envoy bootstrap
// and the statuses its objects should get, written under out/.
import { convertExamples, printValidationSummary, processIo } from '@extlb/cli';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const io = { ...processIo(), cwd: root };
const folders = ['quickstart', 'policy-on-service', 'inferencepool'];

let code = await printValidationSummary(['examples'], io, 'examples');
for (const name of folders) {
  code = Math.max(code, await convertExamples(io, `examples/${name}`, `out/${name}`));
}
process.exitCode = code;
