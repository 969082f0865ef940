/**
 * The absolute path of the emulator executable for this platform. Throws an
 * Error with `code: 'ROOMCHAT_EMULATOR_NOT_FOUND'` when this platform has none
 * or its package (an optional dependency) is not installed.
 */
export function binaryPath(): string
/** The package holding the executable of each platform (`${process.platform}-${process.arch}`). */
export const platformPackages: Readonly<Record<string, string>>
/** This package's version, which is the emulator's. */
export const version: string
