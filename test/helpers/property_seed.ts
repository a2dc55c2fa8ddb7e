import fc from 'fast-check';

// Loaded by npm test before every test file (--import): the property tests draw the same cases on
// every run, so a suite that passed passes again. DOCSHARD_PROPERTY_SEED draws others, to explore;
// a failure names its seed and the shrunk case, which then belongs in a test of its own.
fc.configureGlobal({ seed: Number(process.env.DOCSHARD_PROPERTY_SEED ?? 20261206) });
