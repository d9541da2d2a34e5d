/** The package version (also in package.json; the contract test checks they agree). */
export const VERSION = "0.2.0";
