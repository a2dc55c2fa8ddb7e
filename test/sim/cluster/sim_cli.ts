import { parseArgs } from 'node:util';
import { PLANTED_BUGS, replayCommand, runSeed, type PlantedBug, type SimOptions } from './cluster_sim.js';

// npm run sim -- --seeds N [--from S] [--duration MS] [--bug NAME] [--no-faults] [--trace]
// Runs seeds S..S+N-1 of the whole-cluster simulation; a failing seed prints what it broke, the
// steps before it, and the command that replays it exactly. Exits 1 if any seed failed.
const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1' },
    from: { type: 'string', default: '1' },
    duration: { type: 'string' },
    bug: { type: 'string' },
    'no-faults': { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
  },
});
const bug = values.bug as PlantedBug | undefined;
if (bug !== undefined && !(bug in PLANTED_BUGS)) {
  console.error(`unknown --bug ${bug}; planted bugs: ${Object.keys(PLANTED_BUGS).join(', ')}`);
  process.exit(2);
}
let failed = 0;
const from = Number(values.from);
for (let seed = from; seed < from + Number(values.seeds); seed++) {
  const options: SimOptions = { seed, ...(values.duration === undefined ? {} : { durationMs: Number(values.duration) }), ...(bug === undefined ? {} : { bug }), faults: !values['no-faults'] };
  const started = Date.now();
  const result = await runSeed(options);
  const wall = ((Date.now() - started) / 1000).toFixed(1);
  if (result.violations.length === 0) {
    console.log(`seed ${seed}: ok (${result.steps} steps, ${result.virtualMs} virtual ms, ${wall} s) ${JSON.stringify(result.stats)}`);
  } else {
    failed += 1;
    console.log(`seed ${seed}: FAILED (${result.steps} steps, ${wall} s)`);
    for (const v of result.violations.slice(0, 10)) console.log(`  ${v}`);
    console.log('  the steps before it:');
    for (const line of result.traceTail) console.log(`    ${line}`);
    console.log(`  replay: ${replayCommand(options)}`);
  }
  if (values.trace) for (const line of result.trace) console.log(line);
}
process.exit(failed > 0 ? 1 : 0);
