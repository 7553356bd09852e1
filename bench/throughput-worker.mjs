/**
 * Child process running one throughput variant (see lib/throughput.mjs), driven by `run.mjs` over
 * IPC, so that each variant has its own JIT state and its own AsyncLocalStorage state: in Node 20
 * an enabled AsyncLocalStorage installs promise hooks for the whole process, which would otherwise
 * also tax the raw-pg baseline.
 *
 * Messages in:  { cmd: 'init', name, config } | { cmd: 'warmup', seconds } | { cmd: 'round', seconds } | { cmd: 'close' }
 * ('close' first counts the async resources one query creates, see `census`)
 * Messages out: { ok: true, result } | { ok: false, error }
 */
import { census, createVariant } from './lib/throughput.mjs'

let variant

async function handle(msg) {
  switch (msg.cmd) {
    case 'init':
      variant = await createVariant(msg.name, msg.config)
      return { pid: process.pid }
    case 'warmup':
      return variant.warmup(msg.seconds)
    case 'round':
      return variant.round(msg.seconds)
    case 'close': {
      const asyncResourcesPerQuery = variant === undefined ? undefined : await census(variant)
      const distribution = variant?.distribution()
      await variant?.close()
      return { distribution, asyncResourcesPerQuery }
    }
    default:
      throw new Error(`unknown command ${msg.cmd}`)
  }
}

process.on('message', (msg) => {
  handle(msg).then(
    (result) => {
      process.send({ ok: true, result }, () => {
        if (msg.cmd === 'close') process.disconnect()
      })
    },
    (err) => process.send({ ok: false, error: String(err?.stack ?? err) }),
  )
})
