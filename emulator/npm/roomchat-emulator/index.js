'use strict'
// roomchat-emulator: where this platform's emulator executable is. The executable
// comes in an optional dependency per platform (npm installs only the one whose
// `os` and `cpu` match); `roomchat/testing` runs it.

const fs = require('node:fs')
const path = require('node:path')

/** The package of each platform (`${process.platform}-${process.arch}`) that ships one. */
const platformPackages = Object.freeze({
  'linux-x64': 'roomchat-emulator-linux-x64',
  'linux-arm64': 'roomchat-emulator-linux-arm64',
})

/** The version of this package, which is the emulator's. */
const version = require('./package.json').version

/**
 * The absolute path of the emulator executable for this platform. Throws an
 * Error (code `ROOMCHAT_EMULATOR_NOT_FOUND`) saying what is missing when this
 * platform has none or its package is not installed.
 */
function binaryPath() {
  const platform = `${process.platform}-${process.arch}`
  const name = platformPackages[platform]
  if (name === undefined) {
    throw notFound(
      `roomchat-emulator has no executable for ${platform} (it ships ${Object.keys(platformPackages).join(', ')}); ` +
        'build one from the repository (cargo build -p roomchat-emulator) and set ROOMCHAT_EMULATOR to it',
    )
  }
  let folder
  try {
    folder = path.dirname(require.resolve(`${name}/package.json`))
  } catch {
    throw notFound(
      `roomchat-emulator: the package ${name} (this platform's executable) is not installed; ` +
        'reinstall without --omit=optional / --no-optional: npm install -D roomchat-emulator',
    )
  }
  const file = path.join(folder, 'bin', 'roomchat-emulator')
  try {
    fs.accessSync(file, fs.constants.X_OK)
  } catch {
    // Some installers drop the executable bit of package files.
    try {
      fs.chmodSync(file, 0o755)
    } catch {
      throw notFound(`roomchat-emulator: ${file} is missing or cannot be made executable`)
    }
  }
  return file
}

function notFound(message) {
  const error = new Error(message)
  error.code = 'ROOMCHAT_EMULATOR_NOT_FOUND'
  return error
}

module.exports = { binaryPath, platformPackages, version }
