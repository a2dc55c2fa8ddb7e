export { compileUpdate, upsertDocument, type CompiledUpdate } from './update_driver.js';
