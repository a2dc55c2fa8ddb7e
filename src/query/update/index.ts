export { compileUpdate, upsertDocument, type CompiledUpdate, type UpdateContext, type UpdateOptions, type UpdateResult } from './update_driver.js';
