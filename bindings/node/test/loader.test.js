'use strict'
// When no native addon fits this machine, require('roomchat') says which
// platform it looked for (the published packages' case, where the platform
// package is simply not installed, runs in scripts/dist/cleanroom-npm.sh).
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

// A child Node that believes it runs on `arch`, then loads the package.
function loadAs(arch) {
  const script = `
    Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })
    try {
      require(${JSON.stringify(path.join(__dirname, '..'))})
      console.log(JSON.stringify({ loaded: true }))
    } catch (error) {
      console.log(JSON.stringify({ message: error.message, code: error.code, platform: error.platform, cause: String(error.cause) }))
    }`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))
}

test('an architecture with no addon: the error names the platform', { skip: process.platform !== 'linux' }, () => {
  const result = loadAs('riscv64')
  assert.equal(result.code, 'ERR_ROOMCHAT_NATIVE_ADDON')
  assert.match(result.platform, /^linux-riscv64-(gnu|musl)$/)
  assert.match(result.message, new RegExp(`^roomchat has no native addon for this platform \\(${result.platform}, Node ${process.version}\\): `))
  // napi's own error is kept as the cause.
  assert.match(result.cause, /Cannot find native binding/)
})

test('this machine loads its addon', () => {
  assert.deepEqual(loadAs(process.arch), { loaded: true })
})
