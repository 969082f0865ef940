#!/usr/bin/env node
// The `roomchat` command of the npm package (`npm install -g roomchat`, `npx
// roomchat`): the command line of roomchat-cli, the same Rust entry point as
// the binary of `cargo install roomchat-cli`, run in this process by the addon.
// It writes to stdout and stderr itself; Ctrl-C ends the process as it would
// the binary (during `--all`, the command catches it and prints where to resume).
'use strict'

let native
try {
  native = require('../native.js')
} catch (error) {
  // index.js's loader names the platform and the package that is missing.
  try {
    require('../index.js')
  } catch (named) {
    error = named
  }
  process.stderr.write(`roomchat: ${error.message}\n`)
  process.exit(1)
}
process.exit(native.cliMain(process.argv.slice(2)))
