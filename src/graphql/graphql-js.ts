/**
 * graphql-js, loaded as the one CommonJS instance Apollo Server loads.
 * graphql 16 ships both CommonJS (`main`) and ESM (`module`) builds; a
 * bundler-style resolver (vitest) picks the ESM one for a bare `graphql`
 * import while Node gives Apollo the CommonJS one, and graphql-js refuses
 * types from the other copy. Naming the file keeps a single copy everywhere.
 */
export * from 'graphql/index.js';
