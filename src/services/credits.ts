// Moved to ./billing/credits.ts. Kept while src/jobs (being reworked on another branch) still
// imports this path; remove once nothing does.
export * from './billing/credits.ts';
