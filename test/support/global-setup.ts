/**
 * Integration project setup: builds `dist/` once (when missing or stale) before any test file,
 * for the tests and examples that run the built package (the CLI, process-exit, the pack test).
 */
import { ensureBuilt } from './ensure-built.js'

export default function setup(): void {
  ensureBuilt()
}
