export { compileUpdate, upsertDocument, type CompiledUpdate } from './update_driver.js';
export { diffChangesPath, documentDiff } from './document_diff.js';
