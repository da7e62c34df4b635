// The model-server benchmark of `extlb picker-bench` with its defaults: round robin, least request,
// the load-aware profile and two load-aware replicas sharing nothing, over simulated vLLM servers
// with a shared-prefix workload and a rate sweep. Prints the table, the active-active comparison
// and each picker's knee; asserts nothing.
import { DEFAULT_BENCH, REFERENCE_PICKERS, formatBenchReport, runPickerBench } from '../src/benchmark/run.js';

const report = await runPickerBench({ ...DEFAULT_BENCH, pickers: REFERENCE_PICKERS, onProgress: (line) => process.stderr.write(`${line}\n`) });
process.stdout.write(formatBenchReport(report));
