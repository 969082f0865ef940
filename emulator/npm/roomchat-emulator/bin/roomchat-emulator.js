#!/usr/bin/env node
'use strict'
// `npx roomchat-emulator [flags]`: runs this platform's executable with the same
// stdin, stdout and stderr, passes SIGINT, SIGTERM and SIGHUP on, and exits as it
// did. (The emulator also stops when this process dies: it watches its parent.)
const { spawn } = require('node:child_process')
const { binaryPath } = require('..')

let file
try {
  file = binaryPath()
} catch (error) {
  console.error(error.message)
  process.exit(1)
}
const child = spawn(file, process.argv.slice(2), { stdio: 'inherit' })
const forward = (signal) => child.kill(signal)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward)
child.on('error', (error) => {
  console.error(`roomchat-emulator: cannot run ${file}: ${error.message}`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  } else {
    process.exit(code ?? 1)
  }
})
