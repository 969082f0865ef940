// The loaded round of a benchmark: scripts/bench/cpu-load.sh (one busy-loop
// process per core, at normal priority) runs as a child while `fn` runs, and
// stops when `fn` settles, throws, or this process ends (its stdin pipe closes).
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', 'bench', 'cpu-load.sh')

/** The busy processes a loaded round starts: one per core. */
export const loadProcesses = os.availableParallelism()

/** The label of a loaded round's figures. */
export const loadedLabel = `loaded (${loadProcesses} busy processes)`

/** Runs `fn` while every core has a busy process beside it; returns what `fn` returns. */
export async function withCpuLoad(fn) {
  const load = spawn('bash', [script, String(loadProcesses), '900'], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => load.once('exit', resolve))
  try {
    const ready = await new Promise((resolve, reject) => {
      load.once('error', reject)
      load.once('exit', (code) => reject(new Error(`cpu-load.sh exited (${code}) before it started`)))
      readline.createInterface({ input: load.stdout }).once('line', resolve)
    })
    if (!ready.startsWith('cpu-load:')) throw new Error(`cpu-load.sh: ${ready}`)
    return await fn()
  } finally {
    load.stdin.end()
    await exited
  }
}
