// What every handler may use: configuration, the database and loaded services.
import type { Config } from './config.ts';
import type { Db, Sql } from './db/client.ts';

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

export interface AppContext {
  config: Config;
  db: Db;
  sql: Sql;
  log: Logger;
}
